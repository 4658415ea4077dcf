// The store lock, P.lock: an flock held for the owner's whole tenure. The
// kernel releases it when the process dies, so it is the only liveness truth
// (pid reuse cannot fool it). flock, unlike fcntl locks, is not dropped when
// another descriptor of the same file is closed.
//
// The lock file may be removed (a store's deletion removes it; an election
// refused because the store was deleted removes the one it made), but only
// by a process that holds its flock. Whoever takes the flock then checks
// that the path still names the file it locked (see lockFile.try): a
// process that opened the file before it was removed, and waited, would
// otherwise hold a lock on a file nobody else can open, beside a process
// that locks the new file at the path.

package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// lockFile is one flock on a path.
type lockFile struct {
	f *flockFile
}

func newLockFile(path string) (*lockFile, error) {
	if err := fsutil.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return &lockFile{f: newFlockFile(path, fsutil.FileMode)}, nil
}

// lockTries bounds how often try locks anew after the file it locked
// turned out to be removed or replaced: each time, its holder removed it
// meanwhile.
const lockTries = 3

// try takes the lock if it is free. A lock taken on a file the path no
// longer names (removed by its holder while this process had it open) is
// let go at once, and the file now at the path (created if missing) is
// locked instead; after lockTries such turns it reports the lock held.
func (l *lockFile) try() (bool, error) {
	for range lockTries {
		ok, err := l.f.TryLock()
		if err != nil {
			return false, fmt.Errorf("lock %s: %w", l.f.Path(), err)
		}
		if !ok {
			return false, nil
		}
		same, err := l.namesLocked()
		if err == nil && same {
			return true, nil
		}
		if uerr := l.f.Unlock(); uerr != nil {
			return false, fmt.Errorf("unlock %s: %w", l.f.Path(), uerr)
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// namesLocked reports whether the lock's path names the file this
// process holds the flock of.
func (l *lockFile) namesLocked() (bool, error) {
	held, err := l.f.Stat() // the locked descriptor's file
	if err != nil {
		return false, fmt.Errorf("stat locked %s: %w", l.f.Path(), err)
	}
	now, err := os.Stat(l.f.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", l.f.Path(), err)
	}
	return os.SameFile(held, now), nil
}

func (l *lockFile) unlock() error { return l.f.Unlock() }

// removeHeld removes the lock file, whose flock this process holds (the
// lock stays held, on the unlinked file, until unlock): see the file
// comment for why only a holder may.
func (l *lockFile) removeHeld() error {
	if err := os.Remove(l.f.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", l.f.Path(), err)
	}
	return fsutil.SyncDir(filepath.Dir(l.f.Path()))
}

// Exclusive takes the lock at path for the caller's whole lifetime, for
// stores with no spool (a process that must be alone). When another process
// holds it, it returns a *LockedError (errors.Is ErrLocked) carrying the
// holder's state read from statePath ("" to skip). Call release to unlock.
func Exclusive(path, statePath string) (release func() error, err error) {
	l, err := newLockFile(path)
	if err != nil {
		return nil, err
	}
	ok, err := l.try()
	if err != nil {
		return nil, err
	}
	if !ok {
		le := &LockedError{Path: path}
		if statePath != "" {
			if st, err := ReadState(statePath); err == nil {
				le.Owner = &st
			}
		}
		return nil, le
	}
	return l.unlock, nil
}
