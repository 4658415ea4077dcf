// Waiters: callers (local Await calls and socket ingest requests) waiting
// for a batch's outcome, answered by the ingest loop the moment the batch's
// transaction commits or the batch fails.

package owner

import (
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// recentResults is how many of the latest outcomes waiters keeps.
const recentResults = 256

// waiters maps batch ids to the channels of those waiting for them, and
// keeps the latest recentResults outcomes: a producer's request often
// arrives just after its batch was applied (the watch of incoming/ starts
// the drain at the batch's arrival), and is then answered from memory
// rather than from the ledger.
type waiters struct {
	mu     sync.Mutex
	m      map[string][]chan recordstore.BatchResult // guarded by mu
	recent map[string]recordstore.BatchResult        // guarded by mu
	order  []string                                  // recent's ids, a ring; guarded by mu
	next   int                                       // the ring's oldest slot once full
}

func newWaiters() *waiters {
	return &waiters{m: map[string][]chan recordstore.BatchResult{}, recent: map[string]recordstore.BatchResult{}}
}

// add registers interest in id. The channel receives the result once (at
// once when it is one of the recent ones and was not a failure); call the
// returned cancel when no longer waiting. A recent failure is left to the
// ledger, which records every failure: the batch may have been put back
// for a retry since, and its next outcome is the one to wait for.
func (w *waiters) add(id string) (<-chan recordstore.BatchResult, func()) {
	ch := make(chan recordstore.BatchResult, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if res, ok := w.recent[id]; ok && res.Outcome != recordstore.OutcomeFailed {
		ch <- res
		return ch, func() {}
	}
	w.m[id] = append(w.m[id], ch)
	return ch, func() { w.remove(id, ch) }
}

func (w *waiters) remove(id string, ch chan recordstore.BatchResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.m[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.m, id)
	} else {
		w.m[id] = list
	}
}

// resolve hands res to everyone waiting for res.ID, and keeps it for
// those who come later.
func (w *waiters) resolve(res recordstore.BatchResult) {
	w.mu.Lock()
	w.remember(res)
	list := w.m[res.ID]
	delete(w.m, res.ID)
	w.mu.Unlock()
	for _, ch := range list {
		ch <- res
	}
}

// remember adds res to the recent outcomes, forgetting the oldest when
// they are full. A later outcome of the same batch (a retried one)
// replaces the earlier.
func (w *waiters) remember(res recordstore.BatchResult) {
	if _, ok := w.recent[res.ID]; ok {
		w.recent[res.ID] = res
		return
	}
	if len(w.order) < recentResults {
		w.order = append(w.order, res.ID)
	} else {
		delete(w.recent, w.order[w.next])
		w.order[w.next] = res.ID
		w.next = (w.next + 1) % recentResults
	}
	w.recent[res.ID] = res
}
