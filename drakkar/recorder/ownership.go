// Ownership of the worker's store as seen by a process that does not own
// it: answering a batch's outcome from storage.dir alone (the ledgers of
// the worker's files there and the ledger file), noticing that the owner
// went away, and taking the store over.

package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/fb46ecde/records/drakkar/internal/errcode"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

// LedgerRetention is how long the outcome of a spooled batch stays
// answerable: the owner sweeps the live file's ledger rows older than
// this, and the ledger file's rows older than this are removed when a
// file's ledger is copied into it.
const LedgerRetention = 7 * 24 * time.Hour

// lookupPatience is how long a process waiting for another process's
// answer keeps asking when no ledger can be asked (the owner is still
// starting, say) before it gives up with the error.
const lookupPatience = time.Minute

// ownerPoll is how often a process waiting for another process's answer
// checks that the owner is still there.
const ownerPoll = 200 * time.Millisecond

// ledgerFile is the path of the worker's ledger file,
// <storage.dir>/<worker>.records.ledger: a SQLite file holding only a
// ledger, into which the ledger of every file of the worker is copied
// before the file is sealed (sealing drops it). A new owner's live file
// carries it, and a process that does not own the store reads it; so the
// outcome of a batch stays answerable from storage.dir once the file it
// was applied to is sealed and moved into the history folder.
func ledgerFile(cfg Config) string {
	return storePath(cfg) + ".ledger"
}

// ErrOutcomeUnknown is the sentinel of OutcomeUnknownError, of the same
// code "outcome_unknown".
var ErrOutcomeUnknown = errcode.Sentinel("outcome_unknown", "outcome unknown")

// OutcomeUnknownError is returned by Write when the outcome of the batch
// it spooled can no longer be found: no ledger in storage.dir holds it and
// it is in no folder of the spool. Its events may or may not be in a file
// of the worker: look (e.g. in the history folder) before writing them
// again.
type OutcomeUnknownError struct {
	BatchID string
}

// Error names the batch and what to do.
func (e *OutcomeUnknownError) Error() string {
	return "batch " + e.BatchID + ": no ledger in storage.dir holds it and it is not in the spool: " +
		"its events may or may not be recorded; look before writing them again"
}

// Unwrap makes errors.Is(err, ErrOutcomeUnknown) true.
func (e *OutcomeUnknownError) Unwrap() error { return ErrOutcomeUnknown }

// ErrorCode is "outcome_unknown", the code the CLI prints.
func (e *OutcomeUnknownError) ErrorCode() string { return "outcome_unknown" }

// spooledBackend is the backend of a process that does not own the
// worker's store: it writes through the spool, and answers a batch's
// outcome from the ledgers of storage.dir (see Recorder.storedOutcome)
// instead of refusing to.
type spooledBackend struct {
	*submitonly.Backend
	outcome func(ctx context.Context, id string) (recordstore.BatchResult, error)
}

// BatchOutcome returns the outcome of batch id as a ledger in storage.dir
// records it; an error wrapping recordstore.ErrNotFound when none does.
func (b *spooledBackend) BatchOutcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	return b.outcome(ctx, id)
}

// storedOutcome returns the outcome of batch id as this process, which
// does not own the worker's store, can learn it: from the owner's ledger,
// asked over its socket while it runs (its live file is opened by that
// owner alone); else from the ledgers of storage.dir, read-only — the
// worker's files there (a dead owner's live file is a leftover), newest
// first, then the ledger file. The files are listed before the owner is
// looked for, so a live file created after the look is never listed, and
// read before the ledger file, so a file sealed meanwhile (whose ledger
// was copied into the ledger file first) is never missed. A batch no
// ledger holds (yet) is an error wrapping recordstore.ErrNotFound.
func (r *Recorder) storedOutcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	files, err := ownFiles(r.cfg.StorageDir, r.cfg.WorkerName)
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	st, err := owner.ReadStatus(ctx, storePath(r.cfg), 0)
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	if !ownerGone(st) {
		return askOwner(ctx, st.Socket, id)
	}
	list := make([]string, 0, len(files)+1)
	for i := len(files) - 1; i >= 0; i-- {
		list = append(list, files[i])
	}
	return sqlite.LedgerOutcome(ctx, append(list, ledgerFile(r.cfg)), id)
}

// askOwner asks the owner at socket for the ledger's outcome of batch id,
// without waiting for it: an error wrapping recordstore.ErrNotFound while
// the batch is not applied (or the owner does not know it), another when
// the owner does not answer.
func askOwner(ctx context.Context, socket, id string) (recordstore.BatchResult, error) {
	if socket == "" {
		return recordstore.BatchResult{}, fmt.Errorf("batch outcome %s: the owner serves no socket yet", id)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := owner.Call(cctx, socket, owner.Request{Action: owner.ActionIngest, IDs: []string{id}})
	if err != nil {
		return recordstore.BatchResult{}, fmt.Errorf("batch outcome %s: ask the owner: %w", id, err)
	}
	if len(resp.Results) == 1 && resp.Results[0].Done && resp.Results[0].Result != nil {
		return *resp.Results[0].Result, nil
	}
	return recordstore.BatchResult{}, recordstore.Errorf(recordstore.ErrNotFound, "batch %s is not in the owner's ledger", id)
}

// writeLocked appends rows to the events stream; the caller holds mu. As
// the owner it writes the live file. Otherwise it sends one batch on the
// owner's fast path (owner.WriteOptions.Fast), whose answer is the
// outcome; when the owner does not answer, the batch is in the spool and
// awaitSpooled waits for its outcome.
func (r *Recorder) writeLocked(ctx context.Context, rows recordstore.ValueRows) (owner.Appended, error) {
	st := r.st()
	if st.Role() == owner.RoleOwner {
		return st.AppendBuffer(ctx, EventsKind, &r.events, rows, owner.AppendOptions{})
	}
	var reported string // the owner instance Options.Waiting was told of
	r.reportWait(ctx, &reported)
	opts := owner.AppendOptions{Declare: &r.events, WriteOptions: owner.WriteOptions{NoWait: true, Fast: true}}
	a, err := st.AppendBuffer(ctx, EventsKind, &r.events, rows, opts)
	if err != nil || !a.Pending {
		return a, err // refused here (nothing published), or the owner's answer on the fast path
	}
	res, err := r.awaitSpooled(ctx, a.Batch, reported)
	if err != nil {
		return owner.Appended{}, err
	}
	if err := res.Err(); err != nil {
		return owner.Appended{}, fmt.Errorf("append to %s: %w", EventsKind, err)
	}
	if len(res.Entries) == 0 || res.Entries[len(res.Entries)-1].Append == nil {
		return owner.Appended{}, fmt.Errorf("append to %s: batch %s has no append window", EventsKind, res.ID)
	}
	return owner.Appended{AppendResult: *res.Entries[len(res.Entries)-1].Append,
		Written: owner.Written{Spooled: true, Batch: res.ID}}, nil
}

// errOwnerGone ends a wait whose owner went away.
var errOwnerGone = errors.New("the owner of the store went away")

// awaitSpooled waits for the outcome of batch id, which this process
// published: from the owner (over its socket) or a ledger of storage.dir.
// When the owner goes away without an answer and no ledger holds one, it
// takes the store over (takeOver) and waits again, as the owner or for the
// process that won. A batch found nowhere is an *OutcomeUnknownError; the
// end of ctx a *owner.PendingError. reported is the owner instance
// Options.Waiting was told of already ("" for none): it is told of each
// other one it waits for.
func (r *Recorder) awaitSpooled(ctx context.Context, id, reported string) (recordstore.BatchResult, error) {
	var failing time.Time // since when no ledger could be asked
	for {
		st := r.st()
		if st.Role() == owner.RoleOwner {
			res, err := st.Await(ctx, id)
			return res, outcomeErr(id, err)
		}
		r.reportWait(ctx, &reported)
		wctx, cancel := context.WithCancelCause(ctx)
		stop := r.watchOwner(wctx, cancel)
		res, err := st.Await(wctx, id)
		stop()
		gone := errors.Is(context.Cause(wctx), errOwnerGone)
		cancel(nil)
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			if !errors.Is(err, owner.ErrPending) {
				err = &owner.PendingError{BatchID: id}
			}
			return res, err
		case errors.Is(err, recordstore.ErrNotFound):
			return res, outcomeErr(id, err)
		case !gone:
			// No ledger could be asked (an owner still starting, a file
			// sealed or moved as it was opened): look again, for a while.
			if failing.IsZero() {
				failing = time.Now()
			} else if time.Since(failing) > lookupPatience {
				return res, err
			}
			if err := sleepCtx(ctx, ownerPoll); err != nil {
				return res, &owner.PendingError{BatchID: id}
			}
			continue
		}
		if res, err := r.storedOutcome(ctx, id); err == nil {
			return res, nil
		}
		r.log.Info("recorder_take_over", "worker", r.cfg.WorkerName, "batch", id)
		if err := r.takeOver(ctx); err != nil {
			return recordstore.BatchResult{}, fmt.Errorf("batch %s: the owner went away and taking the store over failed: %w", id, err)
		}
	}
}

// outcomeErr turns the ErrNotFound of an Await into an
// *OutcomeUnknownError.
func outcomeErr(id string, err error) error {
	if errors.Is(err, recordstore.ErrNotFound) {
		return &OutcomeUnknownError{BatchID: id}
	}
	return err
}

// watchOwner checks every ownerPoll, until stop is called, whether the
// owner is gone, and then cancels with errOwnerGone.
func (r *Recorder) watchOwner(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ownerPoll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if st, err := owner.ReadStatus(ctx, storePath(r.cfg), 0); err == nil && ownerGone(st) {
					cancel(errOwnerGone)
					return
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// ownerGone reports whether the worker's store has no live owner, as st
// (ReadStatus) sees it: no state file (the owner stopped), a stale one, or
// one whose process has exited and whose socket does not answer (killed).
func ownerGone(st owner.Status) bool {
	if st.Phase == owner.PhaseNone || st.Stale {
		return true
	}
	// The state file calls a killed owner stale at once only while it was
	// ready; one killed while it started or drained (its Close) only once
	// its heartbeat is old.
	return !st.SocketAlive && processGone(st.Host, st.PID)
}

// processGone reports whether process pid of host has exited, as far as
// this process can tell (another host's, or on Windows: never).
func processGone(host string, pid int) bool {
	if h, err := os.Hostname(); err != nil || h != host || pid <= 0 || runtime.GOOS == "windows" {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscall.Signal(0)) != nil
}

// reportWait calls Options.Waiting with the owner's state when it is not
// the one last reported.
func (r *Recorder) reportWait(ctx context.Context, reported *string) {
	if r.opts.Waiting == nil {
		return
	}
	st, err := owner.ReadStatus(ctx, storePath(r.cfg), 0)
	if err != nil || st.Instance == "" || st.Instance == *reported {
		return
	}
	*reported = st.Instance
	r.opts.Waiting(st.State)
}

// takeOver opens the worker's store again after its owner went away: this
// process becomes its owner (a new live file carrying the ledgers, the
// owner's jobs run from the next tick), or the non-owner of the process
// that was faster. The caller holds mu. On error the store is closed:
// later writes fail with recordstore.ErrClosed.
func (r *Recorder) takeOver(ctx context.Context) error {
	if err := r.st().Close(); err != nil {
		r.log.Warn("recorder_close_failed", "error", err)
	}
	st, err := r.openStore(ctx)
	if err != nil {
		return err
	}
	r.store.Store(st)
	if st.Role() != owner.RoleOwner {
		return nil
	}
	if err := r.ownerSetup(ctx); err != nil {
		return err
	}
	r.log.Info("recorder_took_over", "worker", r.cfg.WorkerName, "db_path", r.live)
	return nil
}

// sleepCtx sleeps d or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
