// Process liveness on unix: signal 0, and on Linux a zombie (exited, not yet
// reaped by its parent) counts as gone.

//go:build unix

package owner

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// pidAlive reports whether a process with pid exists and has not exited.
// EPERM from signal 0 means it exists but belongs to someone else.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether /proc says pid has exited (state Z or X). Without
// /proc (macOS, BSD) it reports false.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain spaces or parentheses: take the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	s := b[i+2]
	return s == 'Z' || s == 'X'
}
