// Whether this process may write a file, on Unix: access(2).

//go:build unix

package sqlite

import "syscall"

// accessWrite is access(2)'s W_OK.
const accessWrite = 2

// writable reports whether this process may write p (access(2) W_OK, which
// says yes to root whatever the mode).
func writable(p string) bool { return syscall.Access(p, accessWrite) == nil }
