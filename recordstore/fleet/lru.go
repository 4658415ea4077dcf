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

// release drops one lease of e. The last lease of a store Close could not
// wait for, or of one forgotten as gone (see forgetGone), closes it.
func (f *Fleet) release(e *entry) {
	f.mu.Lock()
	e.leases--
	f.touchLocked(e)
	if e.leases == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
	last := e.leases == 0 && !e.draining && e.store != nil && (e.gone || f.closed && f.entries[e.key] == e)
	if last {
		f.drainLocked(e)
	}
	f.mu.Unlock()
	if last {
		f.closeEntry(e)
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

// Sweep first looks for open stores deleted by another process (one stat
// of each store's file): each is forgotten (see forgetGone; its leases'
// Lease.Gone is closed, and it is closed with its last lease), now when
// no lease holds it. Then it closes the stores unused for IdleClose, then,
// while more than MaxOpen stores are open, the least recently used ones
// that hold no lease and were not used within MinResidency. It returns how
// many it closed. A store being opened is never closed.
func (f *Fleet) Sweep(ctx context.Context) int {
	gone := f.sweepGone()
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
	return gone + len(idle) + len(evict)
}

// sweepGone forgets the open stores whose file was deleted by another
// process, and closes those no lease holds. It returns how many it closed.
func (f *Fleet) sweepGone() int {
	f.mu.Lock()
	var open []*entry
	for el := f.lru.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*entry); !e.draining && e.store != nil {
			open = append(open, e)
		}
	}
	f.mu.Unlock()
	closed := 0
	for _, e := range open {
		if !storeGone(e.store) {
			continue
		}
		f.forgetGone(e)
		f.mu.Lock()
		last := e.gone && e.leases == 0 && !e.draining
		if last {
			f.drainLocked(e)
		}
		f.mu.Unlock()
		if last {
			f.closeEntry(e)
			closed++
		}
	}
	return closed
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
	} else {
		// Asked after the stamp is taken: a file put at the path by hand
		// after another process deleted the store is not remembered as
		// this key's (its identity was never checked).
		f.rememberIdentity(e.key, e.path, func() bool { return !storeGone(e.store) })
	}
	f.mu.Lock()
	if f.entries[e.key] == e {
		delete(f.entries, e.key)
	}
	if e.elem != nil {
		f.lru.Remove(e.elem)
		e.elem = nil
	}
	if f.goneOpen[e.key] == e {
		delete(f.goneOpen, e.key)
	}
	if e.shut != nil {
		close(e.shut)
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
		if err := waitFor(ctx, drained); err != nil {
			return fmt.Errorf("wait for the close of %s: %w", k, err)
		}
		return nil
	}
	f.mu.Unlock()
	if err := waitFor(ctx, e.ready); err != nil {
		return err
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
		if err := waitFor(ctx, idle); err != nil {
			f.mu.Lock()
			e.draining, e.idle = false, nil
			close(e.drained)
			f.mu.Unlock()
			return fmt.Errorf("wait for the leases of %s: %w", k, err)
		}
	}
	f.closeEntry(e)
	return nil
}

// waitFor waits for ch to be closed until ctx ends; a closed ch wins over
// an ended ctx, so that nothing ready is left waiting by chance.
func waitFor(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
// for them without limit) and stops the sweeper: CloseContext with a
// context that never ends.
func (f *Fleet) Close() error { return f.CloseContext(context.Background()) }

// CloseContext closes every open store once its leases are released and
// stops the sweeper. Later Acquires fail with recordstore.ErrClosed. The
// stores without a lease are closed at once; the wait for the others'
// leases ends with ctx. It returns the close errors joined, and, when ctx
// ended first, an error wrapping ctx.Err() that names the stores still
// leased.
//
// On disk when it gives up: every store it closed is closed as a store
// closes (its owner's final drain done, state file removed, lock
// released). A store still leased stays open and owned by this process
// (lock held, state file and socket in place, its loops running) until
// its last lease is released: that Release closes it. Calling
// CloseContext (or Close) again waits for those stores again.
func (f *Fleet) CloseContext(ctx context.Context) error {
	f.mu.Lock()
	first := !f.closed
	f.closed = true
	keys := make([]Key, 0, len(f.entries))
	for k := range f.entries {
		keys = append(keys, k)
	}
	f.mu.Unlock()
	if first {
		f.cancel()
	}
	var errs, held []error
	for _, k := range keys {
		err := f.drain(ctx, k)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			held = append(held, errors.New(k.String()))
			continue
		}
		errs = append(errs, err)
	}
	if len(held) > 0 {
		errs = append(errs, fmt.Errorf("close fleet %s: %w; still leased (open until released): %w", f.root, ctx.Err(), errors.Join(held...)))
		return errors.Join(errs...)
	}
	f.wg.Wait()
	return errors.Join(errs...)
}
