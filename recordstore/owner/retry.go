// Retry state of the drain: which batches failed transiently, when they
// may be tried again, and the one decision, for a batch that could not be
// loaded or applied, between holding it for a retry and failing it.

package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// ingestState is the drain's memory. Guarded by Store.drain.
type ingestState struct {
	policy   RetryPolicy          // Options.Retry
	hw       map[string]int64     // producer instance → highest seq in the ledger
	gapSince map[string]time.Time // batch name → when it was first held back by a gap
	retries  map[string]*retry    // batch name → transient failures so far
	single   bool                 // apply one batch per transaction (a group just failed)
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
// is used up, and then fails it. It reports whether the batch was failed (see failBatch);
// an error means failing it failed, and the batch stays in incoming/ to be
// tried again.
func (s *Store[T]) retryOrFail(ctx context.Context, n spool.BatchName, err error) (bool, error) {
	if !deterministic(err) {
		key := n.String()
		exhausted := s.ing.transient(key, time.Now())
		tries := s.ing.attempts(key)
		if !exhausted {
			s.log.Warn("batch failed; will retry", "batch", key, "tries", tries, "error", err)
			return false, nil
		}
		err = fmt.Errorf("gave up after %d tries: %w", tries, err)
	}
	if ferr := s.failBatch(ctx, n, err); ferr != nil {
		return false, ferr
	}
	return true, nil
}
