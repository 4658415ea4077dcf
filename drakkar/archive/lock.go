// The archive lock: history/<cluster>/.archive.lock by exclusive create,
// refreshed while the pass runs, taken over when stale (rename aside, put
// back with a hard link when it was fresh), re-read before every publish
// and delete (fencing). No flock anywhere.

package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// StalePrefix starts the name a takeover moves a stale lock to:
// .archive.lock.stale.<token of the pass that moved it>.
const StalePrefix = dbfiles.ArchiveLockName + ".stale."

// lock is the archive lock as held by one pass.
type lock struct {
	dir, path string
	body      dbfiles.LockBody
	raw       []byte
	stale     time.Duration
	clock     Clock
	log       *slog.Logger
	emit      func(Event)
	failpoint func(name string)

	// mu guards fenced, set once the lock is found not to be ours.
	mu     sync.Mutex
	fenced bool
}

// acquire tries to take the lock: an exclusive create, or a takeover of a
// stale lock. It returns false (and no error) when another pass holds it.
// On a takeover that finds a fresh lock it puts that lock back and stands
// down. On success the lock file holds our canonical body, 0600, fsynced.
func (l *lock) acquire(ctx context.Context) (bool, error) {
	now, err := l.clock(ctx, l.dir)
	if err != nil {
		return false, err
	}
	l.body.AcquiredAt = now
	if l.raw, err = dbfiles.EncodeLock(l.body); err != nil {
		return false, err
	}
	ok, err := l.create()
	if ok || err != nil {
		return ok, err
	}
	fi, err := os.Stat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return l.create() // released in the meantime: one more try
	}
	if err != nil {
		return false, fmt.Errorf("stat archive lock: %w", err)
	}
	if now, err = l.clock(ctx, l.dir); err != nil {
		return false, err
	}
	if now.Sub(fi.ModTime()) <= l.stale {
		return false, nil
	}
	return l.takeOver(fi)
}

// create makes the lock with an exclusive create; false when it exists.
func (l *lock) create() (bool, error) {
	err := fsutil.Default.CreateFile(l.path, fsutil.FileMode, func(w io.Writer) error {
		_, err := w.Write(l.raw)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create archive lock: %w", err)
	}
	if err := fsutil.SyncDir(l.dir); err != nil {
		return false, err
	}
	return true, nil
}

// takeOver moves a lock found stale (seen) aside, checks that what it
// moved is that lock (same body, same modification time), deletes it and
// creates ours. When it moved a fresh lock instead (another pass took
// over first) it puts it back with a hard link, which never overwrites a
// lock created since, and stands down.
func (l *lock) takeOver(seen fs.FileInfo) (bool, error) {
	old, _ := os.ReadFile(l.path)
	aside := filepath.Join(l.dir, StalePrefix+l.body.Token)
	if err := os.Rename(l.path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // another pass moved it first
		}
		return false, fmt.Errorf("move stale archive lock aside: %w", err)
	}
	l.failpoint(FailTakeoverMoved)
	moved, rerr := os.ReadFile(aside)
	fi, serr := os.Stat(aside)
	if rerr != nil || serr != nil || !bytes.Equal(moved, old) || !fi.ModTime().Equal(seen.ModTime()) {
		l.putBack(aside, moved)
		return false, nil
	}
	prev, _ := dbfiles.DecodeLock(moved)
	l.log.Warn("recorder_archive_lock_taken_over", "token", l.body.Token,
		"previous_token", prev.Token, "previous_worker", prev.Worker, "previous_mtime", fi.ModTime().UTC())
	l.emit(Event{Kind: EventTakenOver, Name: prev.Token})
	if err := os.Remove(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.log.Warn("recorder_archive_failed", "error", err)
	}
	return l.create()
}

// putBack restores a fresh lock moved aside by mistake.
func (l *lock) putBack(aside string, body []byte) {
	other, _ := dbfiles.DecodeLock(body)
	if err := os.Link(aside, l.path); err != nil {
		l.log.Error("recorder_archive_lock_put_back_failed", "token", l.body.Token,
			"moved_token", other.Token, "error", err)
		l.emit(Event{Kind: EventPutBackFailed, Name: other.Token})
	} else {
		_ = fsutil.SyncDir(l.dir)
	}
	_ = os.Remove(aside)
}

// holds re-reads the lock and reports whether it still holds our token.
// The first time it does not, the pass is fenced for good: logged once,
// and every later call answers false.
func (l *lock) holds() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fenced {
		return false
	}
	b, err := os.ReadFile(l.path)
	if err == nil {
		if body, derr := dbfiles.DecodeLock(b); derr == nil && body.Token == l.body.Token {
			return true
		}
	}
	l.fenced = true
	l.log.Error("recorder_archive_fenced", "token", l.body.Token)
	l.emit(Event{Kind: EventFenced})
	return false
}

// isFenced reports whether holds has found the lock taken over.
func (l *lock) isFenced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fenced
}

// refresh touches the lock every interval while it holds our token, until
// ctx ends. It runs on its own goroutine.
func (l *lock) refresh(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b, err := os.ReadFile(l.path)
			if err != nil {
				continue
			}
			if body, err := dbfiles.DecodeLock(b); err == nil && body.Token == l.body.Token {
				if err := touchNow(l.path); err != nil {
					l.log.Warn("recorder_archive_lock_refresh_failed", "error", err)
				}
			}
		}
	}
}

// release deletes the lock, only while it still holds our token; it
// reports whether the pass ended holding it (false: fenced).
func (l *lock) release() bool {
	if !l.holds() {
		return false
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.log.Warn("recorder_archive_failed", "stage", "release", "error", err)
	}
	_ = fsutil.SyncDir(l.dir)
	return true
}
