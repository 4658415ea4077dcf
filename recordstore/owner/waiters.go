// Waiters: callers (local Await calls and socket ingest requests) waiting
// for a batch's outcome, answered by the ingest loop the moment the batch's
// transaction commits or the batch fails.

package owner

import (
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// waiters maps batch ids to the channels of those waiting for them.
type waiters struct {
	mu sync.Mutex
	m  map[string][]chan recordstore.BatchResult // guarded by mu
}

func newWaiters() *waiters {
	return &waiters{m: map[string][]chan recordstore.BatchResult{}}
}

// add registers interest in id. The channel receives the result once; call
// the returned cancel when no longer waiting.
func (w *waiters) add(id string) (<-chan recordstore.BatchResult, func()) {
	ch := make(chan recordstore.BatchResult, 1)
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
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

// resolve hands res to everyone waiting for res.ID.
func (w *waiters) resolve(res recordstore.BatchResult) {
	w.mu.Lock()
	list := w.m[res.ID]
	delete(w.m, res.ID)
	w.mu.Unlock()
	for _, ch := range list {
		ch <- res
	}
}
