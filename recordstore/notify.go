// Notifier and the follow helpers (Wait, Tail) built on it.

package recordstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Notifier broadcasts "this stream changed" to followers in this process.
// Backends call Notify after a commit that touched a stream, and NotifyAll
// when they learn of changes they cannot attribute (another process wrote).
// The zero value is not usable; call NewNotifier.
type Notifier struct {
	mu      sync.Mutex
	waiters map[string]chan struct{} // guarded by mu; closed and dropped on notify
}

// NewNotifier returns a Notifier with no waiters.
func NewNotifier() *Notifier {
	return &Notifier{waiters: map[string]chan struct{}{}}
}

// Changed returns a channel that is closed at the next Notify of stream or
// the next NotifyAll. Take it before reading the state you wait on, so that
// no change is missed between the read and the wait.
func (n *Notifier) Changed(stream string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	ch, ok := n.waiters[stream]
	if !ok {
		ch = make(chan struct{})
		n.waiters[stream] = ch
	}
	return ch
}

// Notify wakes the followers of each named stream.
func (n *Notifier) Notify(streams ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range streams {
		if ch, ok := n.waiters[s]; ok {
			close(ch)
			delete(n.waiters, s)
		}
	}
}

// NotifyAll wakes every follower.
func (n *Notifier) NotifyAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for s, ch := range n.waiters {
		close(ch)
		delete(n.waiters, s)
	}
}

// FollowRecheck is how often Wait re-reads a stream's meta even without a
// notification, a safety net for changes nobody announced.
var FollowRecheck = time.Second

// Wait blocks until stream has a row with seq > afterSeq or is sealed, and
// returns its meta then. A stream that does not exist yet is waited for.
// It returns ctx.Err() when ctx ends first.
func Wait(ctx context.Context, b Backend, stream string, afterSeq int64) (Meta, error) {
	if err := ValidateStreamID(stream); err != nil {
		return Meta{}, err
	}
	n := b.Notifier()
	for {
		ch := n.Changed(stream)
		m, err := b.Meta(ctx, stream)
		switch {
		case err == nil && (m.HighSeq > afterSeq || m.Sealed):
			return m, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return Meta{}, err
		}
		t := time.NewTimer(FollowRecheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return Meta{}, ctx.Err()
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// TailPage is how many rows Tail reads per scan.
const TailPage = 1000

// Tail calls fn for every row of stream with seq > afterSeq, in order, as
// they arrive. It returns nil once the stream is sealed and fully read, fn's
// error if fn fails, or ctx.Err() when ctx ends.
func Tail(ctx context.Context, b Backend, stream string, afterSeq int64, fn func(Record) error) error {
	for {
		m, err := Wait(ctx, b, stream, afterSeq)
		if err != nil {
			return err
		}
		for afterSeq < m.HighSeq {
			recs, err := b.Scan(ctx, stream, ScanOptions{After: afterSeq, Limit: TailPage})
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				if err := fn(r); err != nil {
					return err
				}
				afterSeq = r.Seq
			}
		}
		if m.Sealed && afterSeq >= m.HighSeq {
			return nil
		}
		if afterSeq < m.HighSeq {
			afterSeq = m.HighSeq // the rest was trimmed or replaced away
		}
	}
}
