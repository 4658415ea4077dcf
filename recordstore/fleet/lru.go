// The LRU of open stores: MaxOpen (soft), MinResidency, IdleClose, the
// sweeper, and draining closes (a store is closed only once its leases are
// released; an opener of a draining key waits and reopens it afresh).

package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// touchLocked marks e used now and most recently used.
func (f *Fleet) touchLocked(e *entry) {
	e.lastUsed = f.opts.Now()
	if e.elem != nil {
		f.lru.MoveToFront(e.elem)
	}
}

// release drops one lease of e.
func (f *Fleet) release(e *entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e.leases--
	f.touchLocked(e)
	if e.leases == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// evictSoon runs a sweep in the background when more than MaxOpen stores
// are open (an open never waits for room). Off when SweepInterval is
// negative: the caller sweeps.
func (f *Fleet) evictSoon() {
	if f.opts.SweepInterval < 0 {
		return
	}
	f.mu.Lock()
	over := len(f.entries) > f.opts.MaxOpen && !f.closed
	if over {
		f.wg.Add(1)
	}
	f.mu.Unlock()
	if over {
		go func() {
			defer f.wg.Done()
			f.Sweep(context.Background())
		}()
	}
}

// sweeper runs Sweep every SweepInterval until Close.
func (f *Fleet) sweeper(ctx context.Context) {
	defer f.wg.Done()
	t := time.NewTicker(f.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.Sweep(ctx)
		}
	}
}

// Sweep closes, now, the stores unused for IdleClose, then, while more than
// MaxOpen stores are open, the least recently used ones that hold no lease
// and were not used within MinResidency. It returns how many it closed.
// A store being opened is never closed.
func (f *Fleet) Sweep(ctx context.Context) int {
	now := f.opts.Now()
	f.mu.Lock()
	var idle, evict []*entry
	closable := func(e *entry) bool { return e.leases == 0 && !e.draining && e.store != nil }
	if f.opts.IdleClose > 0 {
		for el := f.lru.Back(); el != nil; el = el.Prev() {
			if e := el.Value.(*entry); closable(e) && now.Sub(e.lastUsed) >= f.opts.IdleClose {
				idle = append(idle, e)
				f.drainLocked(e)
			}
		}
	}
	over := len(f.entries) - len(idle) - f.opts.MaxOpen
	for el := f.lru.Back(); el != nil && over > 0; el = el.Prev() {
		if e := el.Value.(*entry); closable(e) && now.Sub(e.lastUsed) >= f.opts.MinResidency {
			evict = append(evict, e)
			f.drainLocked(e)
			over--
		}
	}
	f.mu.Unlock()
	for _, e := range idle {
		f.closeEntry(e)
		f.stats.idleCloses.Add(1)
	}
	for _, e := range evict {
		f.closeEntry(e)
		f.stats.evictions.Add(1)
	}
	return len(idle) + len(evict)
}

// drainLocked marks e draining: new openers wait for drained.
func (f *Fleet) drainLocked(e *entry) {
	e.draining = true
	e.drained = make(chan struct{})
	if e.leases > 0 {
		e.idle = make(chan struct{})
	}
}

// closeEntry closes a draining entry's store (its leases are released)
// and forgets it.
func (f *Fleet) closeEntry(e *entry) {
	err := e.store.Close()
	if err != nil {
		f.log.Warn("close store", "key", e.key.String(), "err", err)
	}
	f.mu.Lock()
	if f.entries[e.key] == e {
		delete(f.entries, e.key)
	}
	if e.elem != nil {
		f.lru.Remove(e.elem)
		e.elem = nil
	}
	close(e.drained)
	f.mu.Unlock()
	f.stats.closes.Add(1)
}

// drain closes the store of k in this process, if open, once its leases
// are released (waiting for them until ctx ends: then the store stays
// open and draining ends). While it waits, openers of k wait too.
func (f *Fleet) drain(ctx context.Context, k Key) error {
	f.mu.Lock()
	e := f.entries[k]
	if e == nil {
		f.mu.Unlock()
		return nil
	}
	if e.draining {
		drained := e.drained
		f.mu.Unlock()
		select {
		case <-drained:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if e.err != nil {
		return nil
	}
	f.mu.Lock()
	if e.draining { // another drain won the race
		f.mu.Unlock()
		return f.drain(ctx, k)
	}
	f.drainLocked(e)
	idle := e.idle
	f.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			f.mu.Lock()
			e.draining, e.idle = false, nil
			close(e.drained)
			f.mu.Unlock()
			return fmt.Errorf("wait for the leases of %s: %w", k, ctx.Err())
		}
	}
	f.closeEntry(e)
	return nil
}

// CloseStore closes the store of k in this process, if it is open, once
// its leases are released (it waits for them until ctx ends; then the
// store stays open). Openers of k meanwhile wait and then open it afresh.
func (f *Fleet) CloseStore(ctx context.Context, k Key) error { return f.drain(ctx, k) }

// IsOpen reports whether the store of k is open in this process (or being
// opened or closed).
func (f *Fleet) IsOpen(k Key) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.entries[k] != nil
}

// Close closes every open store once its leases are released (waiting
// for them) and stops the sweeper. Later Acquires fail with
// recordstore.ErrClosed. It returns the first close error.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	keys := make([]Key, 0, len(f.entries))
	for k := range f.entries {
		keys = append(keys, k)
	}
	f.mu.Unlock()
	f.cancel()
	var errs []error
	for _, k := range keys {
		errs = append(errs, f.drain(context.Background(), k))
	}
	f.wg.Wait()
	return errors.Join(errs...)
}
