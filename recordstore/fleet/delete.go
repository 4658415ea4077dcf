// Delete: a store's file, its sidecars and its spool removed for good,
// refused while another process owns the store.

package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/owner"
)

// Delete removes the store of k: the file, SQLite's sidecars, the owner's
// state file and socket, the spool folder, the replicator's working
// folder (StoreOptions.Replica), then the lock file, and the bucket
// folders it empties (never the root). The store's replica is left as it
// is: remove its prefix (ReplicaPrefix) where it lives. The store is first closed in
// this process (waiting for its leases until ctx ends); meanwhile opens of
// k fail with ErrDeleting. While another process owns the store (holds
// its flock) Delete refuses with ErrInUse and removes nothing. A key with
// no store is recordstore.ErrNotFound.
//
// Delete is atomic with respect to opens in other processes: it holds the
// root lock exclusive from its check that the store is there to the last
// removal, and an open holds it shared from its identity read until its
// store is open (see rootlock.go). An open that comes after finds no
// store; one that came before has the store open, and its first write
// fails with recordstore.ErrNotFound (owner.Store.Gone) instead of
// writing, or recreating, a file.
//
// On error after the lock was taken some of the files may be gone; the
// store file is removed first, so the key then has no store (a later
// Delete finishes the sidecars).
func (f *Fleet) Delete(ctx context.Context, k Key) error {
	abs, err := f.Path(k)
	if err != nil {
		return err
	}
	f.mu.Lock()
	if err := f.usableLocked(k); err != nil {
		f.mu.Unlock()
		return err
	}
	f.deleting[k] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.deleting, k)
		f.mu.Unlock()
	}()
	if err := f.drain(ctx, k); err != nil {
		return err
	}
	unlock, err := f.lockRoot(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return recordstore.Errorf(recordstore.ErrNotFound, "no store for %s", k)
	} else if err != nil {
		return fmt.Errorf("stat %s: %w", abs, err)
	}
	paths := owner.PathsFor(abs)
	release, err := owner.Exclusive(paths.Lock, paths.State)
	if errors.Is(err, owner.ErrLocked) {
		return fmt.Errorf("%w: %s: %w", ErrInUse, k, err)
	}
	if err != nil {
		return fmt.Errorf("lock the store of %s: %w", k, err)
	}
	err = removeStore(abs, paths)
	if rerr := release(); err == nil && rerr != nil {
		err = fmt.Errorf("unlock the store of %s: %w", k, rerr)
	}
	if err != nil {
		return err
	}
	f.removeEmptyParents(filepath.Dir(abs))
	return nil
}

// removeStore removes the store's files, the lock file last (it is held).
func removeStore(abs string, paths owner.Paths) error {
	for _, p := range []string{abs, abs + "-wal", abs + "-shm", abs + "-journal", paths.State, abs + ".sock"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	if err := os.RemoveAll(paths.Spool); err != nil {
		return fmt.Errorf("remove %s: %w", paths.Spool, err)
	}
	// The replicator's working folder (Litestream's LTX files of what it
	// shipped), when the store was replicated: a store provisioned again
	// for the key must not start from another file's positions.
	if err := os.RemoveAll(replicaWorkDir(abs)); err != nil {
		return fmt.Errorf("remove %s: %w", replicaWorkDir(abs), err)
	}
	if err := os.Remove(paths.Lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", paths.Lock, err)
	}
	return fsutil.SyncDir(filepath.Dir(abs))
}

// removeEmptyParents removes dir and its parents while they are empty,
// stopping at the root.
func (f *Fleet) removeEmptyParents(dir string) {
	for within(f.root, dir) && dir != f.root {
		if err := os.Remove(dir); err != nil {
			return // not empty (or gone): leave it
		}
		if err := fsutil.SyncDir(filepath.Dir(dir)); err != nil {
			f.log.Warn("fsync after removing an empty bucket folder", "path", dir, "err", err)
		}
		dir = filepath.Dir(dir)
	}
}
