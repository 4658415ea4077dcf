// Retry state of the drain: which batches failed transiently, when they
// may be tried again, and the one decision, for a batch that could not be
// loaded or applied, between holding it for a retry and failing it.

package owner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// RepeatLimit is how many times in a row a batch may fail alone with the
// same internal error — the same text, counted across owners in the
// batch's attempts record (spool.AttemptsFile) — before that error counts
// as deterministic and the batch is failed, whatever RetryPolicy would
// still allow. A batch that no owner can ever apply (one SQLite refuses
// for good) then reaches failed/ after five tries, also when every owner
// lives only for one short command.
const RepeatLimit = 5

// ingestState is the drain's memory. Guarded by Store.drain.
type ingestState struct {
	policy   RetryPolicy          // Options.Retry
	hw       map[string]int64     // producer instance → highest seq in the ledger
	gapSince map[string]time.Time // batch name → when it was first held back by a gap
	retries  map[string]*retry    // batch name → transient failures so far
	single   bool                 // apply one batch per transaction (a group just failed)
	// unwritable is set when the failure of a batch given up on could not
	// be recorded either (the store as a whole fails to write: a full
	// disk), and cleared by the next transaction that commits. While it
	// is set, a batch's internal errors are not taken as its own, and
	// retryOrFail holds it instead of giving up: once the store writes
	// again, the batch is applied, not failed for the store's trouble.
	unwritable bool
}

type retry struct {
	first    time.Time
	attempts int
	next     time.Time
}

func (st *ingestState) init(p RetryPolicy) {
	st.policy = p
	st.reset()
}

// reset forgets everything; called when this process becomes the owner.
func (st *ingestState) reset() {
	st.hw = map[string]int64{}
	st.gapSince = map[string]time.Time{}
	st.retries = map[string]*retry{}
	st.single = false
	st.unwritable = false
}

// due reports whether a batch that failed transiently may be tried again.
func (st *ingestState) due(name string, now time.Time) bool {
	r := st.retries[name]
	return r == nil || !now.Before(r.next)
}

// transient records a transient failure and reports whether the batch has
// now used up its tries.
func (st *ingestState) transient(name string, now time.Time) (exhausted bool) {
	r := st.retries[name]
	if r == nil {
		r = &retry{first: now}
		st.retries[name] = r
	}
	r.attempts++
	delay := st.policy.Min << min(r.attempts-1, 20)
	if delay <= 0 || delay > st.policy.Max {
		delay = st.policy.Max
	}
	r.next = now.Add(delay)
	return r.attempts >= st.policy.Attempts || now.Sub(r.first) >= st.policy.For
}

// attempts returns how many transient failures the batch has had.
func (st *ingestState) attempts(name string) int {
	if r := st.retries[name]; r != nil {
		return r.attempts
	}
	return 0
}

func (st *ingestState) done(name string) {
	delete(st.retries, name)
	delete(st.gapSince, name)
}

// deterministic reports whether a load error will recur on every try (the
// batch itself is bad) rather than being an I/O hiccup.
func deterministic(err error) bool {
	return recordstore.Code(err) != recordstore.CodeInternal
}

// retryOrFail decides what becomes of batch n, which failed to load or to
// apply on its own with err: a deterministic error fails it at once; an
// internal one holds it for a retry (due says when) until the retry policy
// is used up or the same error has come RepeatLimit times in a row, and
// then fails it — unless the store could not record such a failure the
// last time and has committed nothing since (ingestState.unwritable): the
// batch is then held, to be applied once the store writes again. It logs the try once: "batch failed; will retry" here,
// or "batch failed" when failBatch moves it. It reports whether the batch
// was failed (see failBatch); an error means failing it failed, and the
// batch stays in incoming/ to be tried again.
func (s *Store[T]) retryOrFail(ctx context.Context, n spool.BatchName, err error) (bool, error) {
	if !deterministic(err) {
		key := n.String()
		exhausted := s.ing.transient(key, time.Now())
		tries := s.ing.attempts(key)
		// The try happened: it is counted even when ctx ends meanwhile (the
		// owner closing), or the next owner would count from fewer.
		nctx := context.WithoutCancel(ctx)
		repeats := s.repeats(nctx, key, err)
		attempt := max(tries, repeats)
		if s.ing.unwritable || (!exhausted && repeats < RepeatLimit) {
			a := spool.Attempts{Batch: key, Error: err.Error(), Repeats: repeats, LastAt: time.Now().UTC()}
			if werr := s.spool.WriteAttempts(nctx, a); werr != nil {
				s.log.Debug("record the tries of a batch", "batch", key, "error", werr)
			}
			s.log.Warn("batch failed; will retry", "batch", key, "attempt", attempt, "same_error", repeats, "error", err)
			s.opts.Metrics.retried()
			return false, nil
		}
		err = &gaveUpError{attempts: attempt, err: err}
		// Failing it completes too: were it cut short, the try would go
		// unlogged and the batch wait for another owner's try.
		ctx = nctx
	}
	if ferr := s.failBatch(ctx, n, err); ferr != nil {
		var gaveUp *gaveUpError
		if errors.As(err, &gaveUp) {
			s.ing.unwritable = true
		}
		return false, ferr
	}
	return true, nil
}

// gaveUpError is the error a batch is failed with when retryOrFail gives
// up on it after attempts tries that failed with err.
type gaveUpError struct {
	attempts int
	err      error
}

func (e *gaveUpError) Error() string {
	return fmt.Sprintf("gave up after %d tries: %v", e.attempts, e.err)
}

func (e *gaveUpError) Unwrap() error { return e.err }

// retryHeld is the error of a batch that failed alone and that
// retryOrFail held for a retry, and logged: the ingest loop does not log
// it again.
type retryHeld struct{ err error }

func (e retryHeld) Error() string { return e.err.Error() }
func (e retryHeld) Unwrap() error { return e.err }

// repeats returns how many tries of batch key in a row, this one (which
// failed with err) included, failed with err's text, from the batch's
// attempts record (1 when it has none, or another error's).
func (s *Store[T]) repeats(ctx context.Context, key string, err error) int {
	prev, rerr := s.spool.ReadAttempts(ctx, key)
	if rerr != nil || prev.Error != err.Error() || prev.Repeats < 1 {
		return 1
	}
	return prev.Repeats + 1
}
