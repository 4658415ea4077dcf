// A store whose live file was deleted, or deleted and made again, under
// this process while it did not own the store: its election and its
// promotion are refused, and its writes fail, instead of writing a file
// put at the path since.

package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fb46ecde/records/recordstore"
)

// LiveChecker is an optional capability of a Target: CheckLiveFile
// reports whether the live file the backend opened is still the one at
// its path. It returns an error wrapping recordstore.ErrNotFound when the
// file was removed or another one was put there (the store was deleted,
// or deleted and created again, by another process), any other error when
// it cannot tell; it must write nothing. sqlite.Backend implements it.
//
// A store whose backend has it checks before an election or a promotion
// creates anything (the lock file, the state file), and again once it
// holds the lock — the check that counts: a store's deletion takes the
// lock too, so nobody deletes the store while this process holds it. A
// backend without it is promoted as before.
type LiveChecker interface {
	CheckLiveFile() error
}

// Gone returns the error that marked the store gone in this process, or
// nil: an election or a promotion found that the live file it opened was
// removed or replaced (an error wrapping recordstore.ErrNotFound). A gone
// store stays gone: every later write, Publish and Await fails with that
// error without trying again, and its promoter has stopped; reads go on in
// the file it opened, on the connections it has open. Close it; an open
// of the path anew sees what is there now.
func (s *Store[T]) Gone() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.gone
}

// checkLive runs the backend's LiveChecker, if it has one. An error
// wrapping recordstore.ErrNotFound marks the store gone (see Gone).
func (s *Store[T]) checkLive() error {
	c, ok := any(s.backend).(LiveChecker)
	if !ok {
		return nil
	}
	err := c.CheckLiveFile()
	if err == nil || !errors.Is(err, recordstore.ErrNotFound) {
		return err
	}
	err = fmt.Errorf("store %s: %w", s.opts.Path, err)
	s.mu.Lock()
	if s.mu.gone == nil {
		s.mu.gone = err
	}
	s.mu.Unlock()
	s.log.Warn("the store's live file was removed or replaced: this process will not write it", "error", err)
	return err
}

// refuseHeld undoes an election or promotion refused by checkLive (err)
// with the lock held: when the live file is missing (the store was
// deleted, not made again) the lock file, which this process may have just
// created, is removed before the lock is let go (removing it is safe while
// held: see lock.go). It returns err.
func (s *Store[T]) refuseHeld(err error) error {
	if _, serr := os.Stat(s.backend.LivePath()); errors.Is(serr, fs.ErrNotExist) {
		if rerr := s.lock.removeHeld(); rerr != nil {
			s.log.Warn("remove the lock file of a deleted store", "error", rerr)
		}
	}
	_ = s.lock.unlock()
	return err
}
