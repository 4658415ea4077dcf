// Lazy, single-flight open: the first Acquire of a key opens its store
// (concurrent first opens share that one open), checks its identity and
// reconciles the fleet's kinds; later ones share the open store.

package fleet

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// entry is one store of the fleet, opening, open or closing.
type entry struct {
	key   Key
	path  string
	ready chan struct{} // closed when the open ended; then store or err is set
	store *Store
	err   error

	// Guarded by Fleet.mu.
	leases   int
	lastUsed time.Time
	elem     *list.Element // in Fleet.lru once open
	draining bool          // being closed: openers wait for drained
	drained  chan struct{} // closed once the store is closed and forgotten
	idle     chan struct{} // while draining with leases: closed when they reach 0
	gone     bool          // forgotten as gone (see forgetGone): the last Release closes it
	// goneCh is closed when the entry is forgotten as gone (Lease.Gone);
	// shut, made then, is closed once its store is closed.
	goneCh chan struct{}
	shut   chan struct{}
}

// newEntry is a new entry of k, opening, with one lease.
func newEntry(k Key, abs string) *entry {
	return &entry{key: k, path: abs, ready: make(chan struct{}), leases: 1, goneCh: make(chan struct{})}
}

// Lease pins an open store: it is not closed (by MaxOpen, IdleClose,
// Delete or Close) until Release. A Lease is used by one goroutine; the
// Store it gives is safe for concurrent use.
type Lease struct {
	f    *Fleet
	e    *entry
	once sync.Once
}

// Store is the leased store.
func (l *Lease) Store() *Store { return l.e.store }

// Key is the leased store's key.
func (l *Lease) Key() Key { return l.e.key }

// Gone is closed once the fleet finds the leased store deleted by another
// process (or deleted and made again): at an Acquire of its key, at a
// write through it, or at a Sweep (the sweeper checks every open store's
// file with one stat). A holder that streams from the store (a follow)
// should end then and Release: the store's file is gone, and the key's
// next open, which waits for the forgotten store to be closed, opens what
// is on disk now.
func (l *Lease) Gone() <-chan struct{} { return l.e.goneCh }

// Release unpins the store; later calls do nothing. A store whose write
// found it deleted by another process (owner.Store.Gone) is forgotten
// then, and closed once its last lease is released: the next Acquire of
// the key opens what is on disk now (see forgetGone).
func (l *Lease) Release() { l.once.Do(func() { l.f.releaseLease(l.e) }) }

// Acquire opens the store of k, or shares it when it is open or being
// opened, and pins it until the Lease is released. A missing store is
// created when the fleet creates on demand, else refused with
// recordstore.ErrNotFound; a file that records another key (or none) is
// refused with ErrMisplaced; a key being deleted with ErrDeleting. A key
// whose store is being closed waits for the close and opens it afresh.
// The open itself is not cut short by ctx (others may share it); the wait
// for it is.
func (f *Fleet) Acquire(ctx context.Context, k Key) (*Lease, error) {
	abs, err := f.Path(k)
	if err != nil {
		return nil, err
	}
	for {
		f.mu.Lock()
		if err := f.usableLocked(k); err != nil {
			f.mu.Unlock()
			return nil, err
		}
		e := f.entries[k]
		if e == nil {
			if old := f.goneOpen[k]; old != nil {
				// The deleted store is still open here (leased): the
				// engine would hand its open back for the path. Wait
				// for its close (its holders were told: Lease.Gone).
				shut := old.shut
				f.mu.Unlock()
				if err := waitFor(ctx, shut); err != nil {
					return nil, fmt.Errorf("wait for the close of the deleted store of %s: %w", k, err)
				}
				continue
			}
			e = newEntry(k, abs)
			f.entries[k] = e
			f.mu.Unlock()
			if err := f.openEntry(ctx, e); err != nil {
				return nil, err
			}
			f.evictSoon()
			return &Lease{f: f, e: e}, nil
		}
		if e.draining {
			drained := e.drained
			f.mu.Unlock()
			select {
			case <-drained:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		e.leases++
		f.touchLocked(e)
		f.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			f.release(e)
			return nil, ctx.Err()
		}
		if e.err != nil {
			return nil, e.err
		}
		if storeGone(e.store) {
			f.forgetGone(e)
			f.release(e)
			continue // open what is there now
		}
		return &Lease{f: f, e: e}, nil
	}
}

// storeGone reports whether st's file was deleted (or deleted and made
// again) by another process since st was opened: its owner found it so
// (Gone), or its backend finds it so now (one stat of the file).
func storeGone(st *Store) bool {
	if st.Gone() != nil {
		return true
	}
	c, ok := st.Backend().(owner.LiveChecker) // a detached store's has none
	return ok && errors.Is(c.CheckLiveFile(), recordstore.ErrNotFound)
}

// releaseLease is Lease.Release: the store forgotten first when a write
// found it gone, then the lease dropped (release closes a forgotten store
// with its last lease).
func (f *Fleet) releaseLease(e *entry) {
	if e.store != nil && e.store.Gone() != nil {
		f.forgetGone(e)
	}
	f.release(e)
}

// forgetGone takes the open store of e, whose file was deleted by another
// process, out of the fleet: later Acquires of its key open the key
// afresh (recordstore.ErrNotFound in a tenant fleet, a new store in a
// fleet that creates on demand), and its identity is not remembered (see
// stamp.go). Leases held keep the old store, reading the file it opened,
// until they are released; the last Release closes it. Meanwhile their
// Lease.Gone is closed, and a new open of the key waits for that close.
// An entry being closed already (draining) is left to that close.
func (f *Fleet) forgetGone(e *entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.gone || e.draining {
		return
	}
	e.gone = true
	close(e.goneCh)
	e.shut = make(chan struct{})
	if f.entries[e.key] == e {
		delete(f.entries, e.key)
	}
	f.goneOpen[e.key] = e
	if e.elem != nil {
		f.lru.Remove(e.elem)
		e.elem = nil
	}
	f.log.Info("store deleted by another process; forgotten", "key", e.key.String())
}

// Do runs fn with the store of k leased for its duration. When fn fails
// with an error of no code (recordstore.CodeInternal: a lock file that
// cannot be made, a spool folder gone) and the store's file was deleted
// meanwhile by another process, the error wraps recordstore.ErrNotFound
// instead, saying so: the store is gone, nothing was written.
func (f *Fleet) Do(ctx context.Context, k Key, fn func(ctx context.Context, st *Store) error) error {
	l, err := f.Acquire(ctx, k)
	if err != nil {
		return err
	}
	defer l.Release()
	err = fn(ctx, l.Store())
	if err != nil && recordstore.Code(err) == recordstore.CodeInternal && storeGone(l.Store()) {
		return recordstore.Errorf(recordstore.ErrNotFound, "the store of %s was deleted meanwhile: %w", k, err)
	}
	return unwritable(l.e.path, err)
}

// unwritable returns err, an error of no code (recordstore.CodeInternal)
// met opening or writing the store file abs, as recordstore.ErrReadOnly
// naming the store's folder when this process cannot write that folder:
// the store cannot be opened (SQLite makes its -wal and -shm there) or
// written (the lock, the state file, the spool) by this user. Any other
// error is returned as it is.
func unwritable(abs string, err error) error {
	if err == nil || recordstore.Code(err) != recordstore.CodeInternal {
		return err
	}
	dir := filepath.Dir(abs)
	if dirWritable(dir) {
		return err
	}
	return recordstore.Errorf(recordstore.ErrReadOnly, "folder %s cannot be written by this user: a fleet store's folder must be writable to open or write its store (SQLite's -wal and -shm, the lock, the state file, the spool): %w", dir, err)
}

// usableLocked refuses an open after Close or of a key being deleted.
func (f *Fleet) usableLocked(k Key) error {
	if f.closed {
		return fmt.Errorf("fleet %s: %w", f.root, recordstore.ErrClosed)
	}
	if f.deleting[k] {
		return errorf(ErrDeleting, "%s", k)
	}
	return nil
}

func (f *Fleet) isDeleting(k Key) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deleting[k]
}

// openEntry opens e's store and publishes the outcome to its sharers.
func (f *Fleet) openEntry(ctx context.Context, e *entry) error {
	st, err := f.openStore(context.WithoutCancel(ctx), e.key, e.path)
	err = unwritable(e.path, err)
	f.mu.Lock()
	if err != nil {
		e.err = err
		if f.entries[e.key] == e {
			delete(f.entries, e.key)
		}
	} else {
		e.store = st
		e.lastUsed = f.opts.Now()
		e.elem = f.lru.PushFront(e)
		f.stats.opens.Add(1)
	}
	f.mu.Unlock()
	close(e.ready)
	return err
}

// openStore opens the store file at abs for k: identity first (creating
// the store when missing and the fleet creates on demand; skipped when the
// file is, unchanged, one this process checked and closed: see stamp.go),
// then the owner election, then the fleet's kinds. On error nothing stays
// open. It holds the root lock shared until the store is open (see
// rootlock.go): a delete in another process waits, and the open never
// brings back a store deleted after its identity was checked.
func (f *Fleet) openStore(ctx context.Context, k Key, abs string) (*Store, error) {
	unlock, err := f.lockRoot(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if f.knownIdentity(k, abs) {
		return f.openChecked(ctx, k, abs)
	}
	id, err := f.readIdentity(ctx, abs)
	if errors.Is(err, errNoStore) && f.opts.RestoreMissing {
		st, restored, err := f.restoreMissing(ctx, k, abs)
		if err != nil || restored {
			return st, err
		}
	}
	if errors.Is(err, errNoStore) {
		if !f.onDemand {
			return nil, recordstore.Errorf(recordstore.ErrNotFound, "no store for %s", k)
		}
		err = f.create(ctx, k, abs, func(ctx context.Context, tmp string) error { return f.build(ctx, k, tmp) })
		if err != nil && !errors.Is(err, ErrExists) {
			return nil, err
		}
		if f.knownIdentity(k, abs) { // this process made it
			return f.openChecked(ctx, k, abs)
		}
		id, err = f.readIdentity(ctx, abs)
	}
	if errors.Is(err, errNoStore) {
		return nil, recordstore.Errorf(recordstore.ErrNotFound, "no store for %s", k)
	}
	if err != nil {
		return nil, err
	}
	if err := checkIdentity(id, k, abs); err != nil {
		return nil, err
	}
	return f.openChecked(ctx, k, abs)
}

// readIdentity reads the identity of the store file at abs.
func (f *Fleet) readIdentity(ctx context.Context, abs string) (string, error) {
	if f.hooks.identityRead != nil {
		f.hooks.identityRead(abs)
	}
	return readIdentity(ctx, abs)
}

// openChecked opens the store file at abs, whose identity is k's: the
// owner election, then the fleet's kinds. On error nothing stays open.
func (f *Fleet) openChecked(ctx context.Context, k Key, abs string) (*Store, error) {
	st, err := f.opts.Open(withKey(ctx, k), abs)
	if err != nil {
		return nil, fmt.Errorf("open the store of %s: %w", k, err)
	}
	if err := f.reconcile(ctx, st, abs); err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// checkIdentity refuses a file whose identity is not k's.
func checkIdentity(id string, k Key, abs string) error {
	switch id {
	case k.String():
		return nil
	case "":
		return errorf(ErrMisplaced, "%s records no fleet key (not made by a fleet)", abs)
	}
	return errorf(ErrMisplaced, "%s records key %s, not %s (copied or renamed by hand?)", abs, cut(id), k)
}

// reconcile declares the fleet's kinds that the store lacks or that add
// columns; an incompatible change is refused naming the store.
func (f *Fleet) reconcile(ctx context.Context, st *Store, abs string) error {
	b := st.Backend()
	need := false
	for _, kind := range f.opts.Kinds {
		status, err := b.CheckDeclare(ctx, kind)
		if err != nil {
			return fmt.Errorf("store %s: %w", abs, err)
		}
		need = need || status != recordstore.KindUnchanged
	}
	if !need {
		return nil
	}
	if _, err := st.DeclareKinds(ctx, f.opts.Kinds, owner.WriteOptions{}); err != nil {
		return fmt.Errorf("store %s: declare the fleet's kinds: %w", abs, err)
	}
	return nil
}
