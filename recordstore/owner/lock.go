// The store lock, P.lock: an flock held for the owner's whole tenure. The
// kernel releases it when the process dies, so it is the only liveness truth
// (pid reuse cannot fool it). flock, unlike fcntl locks, is not dropped when
// another descriptor of the same file is closed.

package owner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// lockFile is one flock on a path.
type lockFile struct {
	f *flock.Flock
}

func newLockFile(path string) (*lockFile, error) {
	if err := fsutil.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return &lockFile{f: flock.New(path, flock.SetPermissions(fsutil.FileMode))}, nil
}

// try takes the lock if it is free.
func (l *lockFile) try() (bool, error) {
	ok, err := l.f.TryLock()
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.f.Path(), err)
	}
	return ok, nil
}

// wait keeps trying every retry until the lock is taken or ctx ends.
func (l *lockFile) wait(ctx context.Context, retry time.Duration) (bool, error) {
	ok, err := l.f.TryLockContext(ctx, retry)
	if err != nil && ctx.Err() == nil {
		return false, fmt.Errorf("lock %s: %w", l.f.Path(), err)
	}
	return ok, nil
}

func (l *lockFile) unlock() error { return l.f.Unlock() }

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
