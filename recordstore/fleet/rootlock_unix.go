//go:build unix

package fleet

import (
	"errors"
	"os"
	"syscall"
)

// lockDir tries once to flock the folder dir, shared or exclusive. busy
// reports that another open file holds a conflicting lock.
func lockDir(dir string, exclusive bool) (unlock func(), busy bool, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(d.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return func() { _ = d.Close() }, false, nil // the close lets the lock go
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = d.Close()
		return nil, true, nil
	}
	_ = d.Close()
	return nil, false, err
}
