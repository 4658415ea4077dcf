//go:build unix

package fleet

import "syscall"

// dirWritable reports whether this process may create files in dir
// (access(2) W_OK).
func dirWritable(dir string) bool { return syscall.Access(dir, 2) == nil }
