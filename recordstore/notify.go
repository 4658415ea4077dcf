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
	// observers are called, under mu, after every Notify and NotifyAll
	// (see Observe); keyed by registration.
	observers map[*func()]struct{}
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
	n.observeLocked()
}

// NotifyAll wakes every follower.
func (n *Notifier) NotifyAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for s, ch := range n.waiters {
		close(ch)
		delete(n.waiters, s)
	}
	n.observeLocked()
}

// Observe calls fn after every Notify and NotifyAll, whichever streams
// they name, until cancel is called: how an owner learns of each commit
// of its backend to tell the followers of other processes. fn runs on the
// notifying goroutine — the writer's, just after its commit — with the
// Notifier's lock held: it must return at once (hand the news to another
// goroutine without blocking) and must not call the Notifier.
func (n *Notifier) Observe(fn func()) (cancel func()) {
	key := &fn
	n.mu.Lock()
	if n.observers == nil {
		n.observers = map[*func()]struct{}{}
	}
	n.observers[key] = struct{}{}
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		delete(n.observers, key)
		n.mu.Unlock()
	}
}

// observeLocked calls the observers; the caller holds mu.
func (n *Notifier) observeLocked() {
	for fn := range n.observers {
		(*fn)()
	}
}

// FollowRecheck is how often Wait re-reads a stream's meta even without a
// notification, a safety net for changes nobody announced.
var FollowRecheck = time.Second

// Wait blocks until stream has a row with seq > afterSeq or is sealed, and
// returns its meta then. A stream that does not exist yet is waited for.
// It also returns as soon as the stream has another generation than the
// one it first saw (deleted or expired, then created again): the caller
// sees Meta.Generation change, and the new generation's seqs start again
// at 1. It returns ctx.Err() when ctx ends first.
func Wait(ctx context.Context, b Backend, stream string, afterSeq int64) (Meta, error) {
	m, _, err := waitGen(ctx, b, stream, afterSeq, 0)
	return m, err
}

// waitGen is Wait for generation gen of stream (0: whichever comes). It
// reports gone, with no error, once gen is no longer the stream's: the
// stream was deleted or expired (and perhaps created again since).
func waitGen(ctx context.Context, b Backend, stream string, afterSeq, gen int64) (m Meta, gone bool, err error) {
	if err := ValidateStreamID(stream); err != nil {
		return Meta{}, false, err
	}
	n := b.Notifier()
	var seen int64 // the generation first seen, when gen is 0
	for {
		ch := n.Changed(stream)
		m, err := b.Meta(ctx, stream)
		err = ctxFirst(ctx, err)
		switch {
		case gen != 0 && (errors.Is(err, ErrNotFound) || err == nil && m.Generation != gen):
			return Meta{}, true, nil
		case err == nil && (m.HighSeq > afterSeq || m.Sealed || seen != 0 && m.Generation != seen):
			return m, false, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return Meta{}, false, err
		}
		if err == nil && seen == 0 && gen == 0 {
			seen = m.Generation
		}
		t := time.NewTimer(FollowRecheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return Meta{}, false, ctx.Err()
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// TailPage is how many rows Tail reads per scan.
const TailPage = 1000

// Tail calls fn for every row of stream with seq > afterSeq, in order, as
// they arrive. It follows one generation of the stream: the one it finds
// (or, when the stream does not exist yet, the first one created). It
// returns nil once that generation is sealed and fully read, or is gone —
// the stream deleted or expired, whether or not a next generation has
// begun, whose seqs start again at 1 —, fn's error if fn fails, or
// ctx.Err() when ctx ends: a read of b that fails once ctx has ended
// returns ctx.Err(), whatever b said (a read cut short by its context
// may fail with its driver's words for it).
func Tail(ctx context.Context, b Backend, stream string, afterSeq int64, fn func(Record) error) error {
	if afterSeq < 0 {
		return Invalidf("tail %s: after %d: must not be negative", stream, afterSeq)
	}
	var gen int64 // the generation followed; 0 until the stream exists
	if err := ValidateStreamID(stream); err != nil {
		return err
	}
	if m, err := b.Meta(ctx, stream); err == nil {
		gen = m.Generation // afterSeq is a position in this one
	} else if !errors.Is(err, ErrNotFound) {
		return ctxFirst(ctx, err)
	}
	for {
		m, gone, err := waitGen(ctx, b, stream, afterSeq, gen)
		if err != nil || gone {
			return err
		}
		gen = m.Generation
		for afterSeq < m.HighSeq {
			recs, err := b.Scan(ctx, stream, ScanOptions{After: afterSeq, Limit: TailPage})
			if err != nil {
				return ctxFirst(ctx, err)
			}
			if len(recs) == 0 {
				break
			}
			// Generations only grow: the same one before and after the
			// scan means the scan read it, not the next one.
			if now, err := b.Meta(ctx, stream); errors.Is(err, ErrNotFound) || err == nil && now.Generation != gen {
				return nil
			} else if err != nil {
				return ctxFirst(ctx, err)
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

// ctxFirst returns ctx.Err() in place of err, a read's error, once ctx has
// ended: the read failed because its caller stopped it.
func ctxFirst(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
