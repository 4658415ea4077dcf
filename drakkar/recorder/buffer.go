// Buffer: the capped in-memory queue events wait in between recording and
// the flush that writes them as one transaction.

package recorder

import "sync"

// BufferStats are the counters of a Buffer, all since it was made.
type BufferStats struct {
	// Size is the number of events waiting now.
	Size int
	// DroppedOldest counts events dropped by Push because the buffer was
	// full (the oldest waiting event goes).
	DroppedOldest int64
	// TailEvicted counts events dropped from the tail by Requeue, to make
	// room for a failed batch at the front.
	TailEvicted int64
	// DroppedAfterRetries counts events dropped by Requeue because their
	// batch had failed max_flush_retries consecutive times.
	DroppedAfterRetries int64
	// Retries counts Requeue calls that put at least one event back.
	Retries int64
}

// Buffer is a FIFO of events capped at a maximum size. It is safe for
// concurrent use: many goroutines Push, one flusher Takes and Requeues.
// Nothing in it survives a crash.
type Buffer struct {
	max        int
	maxRetries int

	mu struct {
		sync.Mutex
		events   []Event // guarded; oldest first
		stats    BufferStats
		notify   chan struct{}
		notifyAt int
	}
}

// NewBuffer returns a buffer that holds at most max events (at least 1)
// and drops a batch after maxRetries consecutive failed flushes
// (ui.recorder.max_buffer and max_flush_retries).
func NewBuffer(max, maxRetries int) *Buffer {
	if max < 1 {
		max = 1
	}
	return &Buffer{max: max, maxRetries: maxRetries}
}

// NewBufferFromConfig is NewBuffer with c's max_buffer and
// max_flush_retries.
func NewBufferFromConfig(c Config) *Buffer { return NewBuffer(c.MaxBuffer, c.MaxFlushRetries) }

// Push appends e. It never blocks on a flush: when the buffer is full the
// oldest waiting event is dropped and counted (DroppedOldest).
func (b *Buffer) Push(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.mu.events) >= b.max {
		b.mu.events[0] = Event{}
		b.mu.events = b.mu.events[1:]
		b.mu.stats.DroppedOldest++
	}
	b.mu.events = append(b.mu.events, e)
	b.signalLocked()
}

// Take removes and returns the oldest max events (all of them when max <=
// 0), for one flush. It returns nil when the buffer is empty.
func (b *Buffer) Take(max int) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.mu.events)
	if max > 0 && max < n {
		n = max
	}
	if n == 0 {
		return nil
	}
	batch := make([]Event, n)
	copy(batch, b.mu.events)
	clear(b.mu.events[:n])
	b.mu.events = b.mu.events[n:]
	if len(b.mu.events) == 0 {
		b.mu.events = nil
	}
	return batch
}

// Requeue puts back a batch whose flush failed, at the front and in its
// order, so it is flushed again before anything newer. Each event counts
// the failure; events that have now failed max_flush_retries times are
// dropped instead (DroppedAfterRetries). When the buffer would exceed its
// cap, the newest waiting events are evicted from the tail (TailEvicted);
// a batch larger than the cap keeps its first events.
func (b *Buffer) Requeue(batch []Event) {
	keep := make([]Event, 0, len(batch))
	var dropped int64
	for _, e := range batch {
		e.tries++
		if e.tries >= b.maxRetries {
			dropped++
			continue
		}
		keep = append(keep, e)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.stats.DroppedAfterRetries += dropped
	if len(keep) == 0 {
		return
	}
	b.mu.stats.Retries++
	if len(keep) > b.max {
		b.mu.stats.TailEvicted += int64(len(keep) - b.max)
		keep = keep[:b.max]
	}
	if over := len(b.mu.events) + len(keep) - b.max; over > 0 {
		b.mu.stats.TailEvicted += int64(over)
		b.mu.events = b.mu.events[:len(b.mu.events)-over]
	}
	b.mu.events = append(keep, b.mu.events...)
	b.signalLocked()
}

// Len is the number of events waiting.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.mu.events)
}

// Stats returns the counters and the current size.
func (b *Buffer) Stats() BufferStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mu.stats
	s.Size = len(b.mu.events)
	return s
}

// Reached returns a channel that is closed once the buffer holds at least
// n events (at once if it already does), so a flusher can flush early
// instead of waiting for its interval. Only the latest call's channel is
// served: a new call replaces an earlier one, which is then never closed.
func (b *Buffer) Reached(n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.notify, b.mu.notifyAt = make(chan struct{}), n
	ch := b.mu.notify
	b.signalLocked()
	return ch
}

// signalLocked closes the Reached channel when its size is met. b.mu must
// be held.
func (b *Buffer) signalLocked() {
	if b.mu.notify != nil && len(b.mu.events) >= b.mu.notifyAt {
		close(b.mu.notify)
		b.mu.notify = nil
	}
}
