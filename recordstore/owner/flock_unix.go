//go:build unix

package owner

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// lockFDFloor is where a won lock's descriptor is moved to (the lowest
// free one from there), above every descriptor the process is likely to
// have. When a process dies, the kernel closes its descriptors from the
// lowest up and releases each file from the last closed to the first, so
// the lock, highest, is released first, before slow ones — an inotify
// instance's release waits for a grace period, 5 to 15 ms, which the next
// owner otherwise waits for too (see docs/performance.md, "Promotion").
const lockFDFloor = 1000

// flockFile is one exclusive flock on a path, taken without blocking. Its
// descriptor is open only while the lock is held.
type flockFile struct {
	path string
	perm fs.FileMode
	mu   sync.Mutex
	fh   *os.File // open while locked; guarded by mu
}

func newFlockFile(path string, perm fs.FileMode) *flockFile {
	growFDTable.Do(func() {
		// The process's descriptor table grows to hold lockFDFloor now,
		// not when a standby wins the lock: a multi-threaded process
		// growing it waits for a grace period (10 ms and more on a busy
		// machine), which would be the promotion's.
		if f, err := os.Open(os.DevNull); err == nil {
			if fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, lockFDFloor); err == nil {
				_ = unix.Close(fd)
			}
			_ = f.Close()
		}
	})
	return &flockFile{path: path, perm: perm}
}

// growFDTable grows the descriptor table once per process.
var growFDTable sync.Once

// Path is the lock file's path.
func (f *flockFile) Path() string { return f.path }

// TryLock takes the lock if it is free, creating the file when missing
// (with perm). It reports false, with no error, when another open file
// description holds it.
func (f *flockFile) TryLock() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fh != nil {
		return true, nil
	}
	fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_RDONLY, f.perm)
	if err != nil {
		return false, err
	}
	err = unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EIO) || errors.Is(err, unix.EBADF) {
		// flock emulated by fcntl (NFSv4) wants a descriptor open for
		// writing.
		_ = fh.Close()
		if fh, err = os.OpenFile(f.path, os.O_CREATE|os.O_RDWR, f.perm); err != nil {
			return false, err
		}
		err = unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		_ = fh.Close()
		return false, nil
	case err != nil:
		_ = fh.Close()
		return false, err
	}
	f.fh = raiseFD(fh)
	return true, nil
}

// raiseFD returns fh's file description on a descriptor at lockFDFloor or
// above, and closes fh's (a flock belongs to the description, which stays
// open); fh itself when the process may not have a descriptor that high.
func raiseFD(fh *os.File) *os.File {
	nfd, err := unix.FcntlInt(fh.Fd(), unix.F_DUPFD_CLOEXEC, lockFDFloor)
	if err != nil {
		return fh
	}
	high := os.NewFile(uintptr(nfd), fh.Name())
	_ = fh.Close()
	return high
}

// Stat describes the locked file (the one the descriptor holds).
func (f *flockFile) Stat() (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fh == nil {
		return nil, fs.ErrClosed
	}
	return f.fh.Stat()
}

// Unlock lets the lock go and closes its descriptor; unlocked already, it
// does nothing.
func (f *flockFile) Unlock() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fh == nil {
		return nil
	}
	err := unix.Flock(int(f.fh.Fd()), unix.LOCK_UN)
	if cerr := f.fh.Close(); err == nil {
		err = cerr
	}
	f.fh = nil
	return err
}
