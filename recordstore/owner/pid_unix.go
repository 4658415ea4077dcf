// Process liveness on unix: signal 0.

//go:build unix

package owner

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with pid exists (signal 0). EPERM
// means it exists but belongs to someone else.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
