// The backlog: this worker's closed recorder files that are not in the
// history folder yet, in memory, in the order they were added.

package recorder

import (
	"sync"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// backlogItem is one file of the backlog; meta is set once it is sealed.
// The last failure (stage, err, failedAt) and the count of failed tries
// stay with the item until it leaves the backlog.
type backlogItem struct {
	path     string
	leftover bool
	meta     *dbfiles.Meta
	stage    string
	err      string
	failedAt time.Time
	failures int
}

// backlog is safe for concurrent use. wakeC wakes the background job.
type backlog struct {
	mu    sync.Mutex
	order []string
	by    map[string]backlogItem
	wakeC chan struct{}
}

func newBacklog() *backlog {
	return &backlog{by: map[string]backlogItem{}, wakeC: make(chan struct{}, 1)}
}

// add puts path in the backlog, or updates its entry.
func (b *backlog) add(path string, leftover bool, meta *dbfiles.Meta) {
	b.mu.Lock()
	defer b.mu.Unlock()
	it, ok := b.by[path]
	if !ok {
		b.order = append(b.order, path)
	}
	it.path, it.leftover, it.meta = path, leftover, meta
	b.by[path] = it
	b.wakeLocked()
}

// fail notes a failed try of path at stage and reports whether it is the
// file's first (a file not in the backlog is added first) and whether it
// failed as the try before (same stage, same error text).
func (b *backlog) fail(path, stage string, err error, at time.Time) (first, same bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	it, ok := b.by[path]
	if !ok {
		b.order = append(b.order, path)
		it.path = path
	}
	same = it.failures > 0 && it.stage == stage && it.err == err.Error()
	it.stage, it.err, it.failedAt = stage, err.Error(), at
	it.failures++
	b.by[path] = it
	return it.failures == 1, same
}

func (b *backlog) remove(path string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.by[path]; !ok {
		return
	}
	delete(b.by, path)
	for i, p := range b.order {
		if p == path {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
}

func (b *backlog) has(path string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.by[path]
	return ok
}

func (b *backlog) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

// items returns a copy of the backlog, oldest first.
func (b *backlog) items() []backlogItem {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]backlogItem, 0, len(b.order))
	for _, p := range b.order {
		out = append(out, b.by[p])
	}
	return out
}

func (b *backlog) wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wakeLocked()
}

func (b *backlog) wakeLocked() {
	select {
	case b.wakeC <- struct{}{}:
	default:
	}
}
