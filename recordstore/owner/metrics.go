// Metrics: the hooks through which a store reports what a metrics system
// counts — appends by role, batches ingested, failed and retried, ingest
// and await latencies, group-commit sizes, promotions and sweeper runs —
// so that the owner package itself depends on no metrics library.

package owner

import (
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Metrics are measurement hooks (Options.Metrics). Every field may be nil.
// They are called from the store's goroutines, on the paths they measure,
// and must not block: add to a counter or a histogram and return.
// recordstore/ownermetrics adapts them to Prometheus.
type Metrics struct {
	// Append is called after an append of this process through the store
	// (Store.Append, Store.AppendBuffer) succeeded: role is the role it was
	// made in (RoleOwner: applied directly; RoleNonOwner or RoleDetached:
	// through the spool), rows the rows it carried.
	Append func(role Role, rows int)
	// Ingested is called, in the owner, for each spooled batch it
	// committed: the rows its appends added, and the time from the
	// batch's creation by its producer (the spool publish) to the commit.
	Ingested func(rows int, latency time.Duration)
	// Failed is called, in the owner, for each batch it moved to failed/.
	Failed func()
	// Retried is called, in the owner, each time a batch that failed
	// transiently is held in incoming/ for another try.
	Retried func()
	// GroupCommit is called, in the owner, after each ingest transaction
	// that committed, with the number of batches it applied together.
	GroupCommit func(batches int)
	// Awaited is called when a wait for a batch's outcome (Store.Await,
	// and the wait of every write through the spool) ends: how long it
	// took, and whether it got the outcome (false: an error, or the
	// caller's ctx ended with the batch still pending).
	Awaited func(took time.Duration, ok bool)
	// Promoted is called when this process takes over a store whose
	// owner went away (a non-owner's promotion), with the new epoch; not
	// for the first owner of a store opened while no process owned it.
	Promoted func(epoch int64)
	// Swept is called after each run of the backend's retention sweeper.
	// The store does not run the sweeper (its backend does): whoever opens
	// the backend wires it (records.Open does).
	Swept func(took time.Duration, err error)
}

// The nil-safe callers of the hooks.

func (m *Metrics) append(role Role, rows int) {
	if m.Append != nil {
		m.Append(role, rows)
	}
}

func (m *Metrics) ingested(rows int, latency time.Duration) {
	if m.Ingested != nil {
		m.Ingested(rows, max(latency, 0))
	}
}

func (m *Metrics) failed() {
	if m.Failed != nil {
		m.Failed()
	}
}

func (m *Metrics) retried() {
	if m.Retried != nil {
		m.Retried()
	}
}

func (m *Metrics) groupCommit(batches int) {
	if m.GroupCommit != nil {
		m.GroupCommit(batches)
	}
}

func (m *Metrics) awaited(since time.Time, ok bool) {
	if m.Awaited != nil {
		m.Awaited(time.Since(since), ok)
	}
}

func (m *Metrics) promoted(epoch int64) {
	if m.Promoted != nil {
		m.Promoted(epoch)
	}
}

// countAppend reports an append of rows made in role once it returned
// without error (*err is read when the deferred call runs).
func (s *Store[T]) countAppend(role Role, rows int, err *error) {
	if *err == nil {
		if role == RoleDeferred { // the write elected this process: count it in its new role
			role = s.Role()
		}
		s.opts.Metrics.append(role, rows)
	}
}

// bufferedRows is the number of rows of b; 0 for a nil buffer (which
// AppendBuffer refuses).
func bufferedRows(rows recordstore.Rows) int {
	if noRows(rows) {
		return 0
	}
	return rows.Len()
}

// noRows reports rows that are nil, or a nil *RowBuffer or *RowSpill.
func noRows(rows recordstore.Rows) bool {
	switch r := rows.(type) {
	case nil:
		return true
	case *recordstore.RowBuffer:
		return r == nil
	case *recordstore.RowSpill:
		return r == nil
	}
	return false
}
