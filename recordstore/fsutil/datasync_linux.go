package fsutil

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// DataSync flushes the file's data and the metadata needed to read it
// back (its size, its block map) with fdatasync, retried when a signal
// interrupts it, as os.File.Sync retries fsync.
func (f osFile) DataSync() error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if !errors.Is(serr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	if serr != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), serr)
	}
	return nil
}
