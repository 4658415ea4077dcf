// Opening data files without following symlinks (unix: O_NOFOLLOW, and
// O_NONBLOCK so that a FIFO planted in a batch cannot hang the reader).

//go:build unix

package spool

import (
	"os"
	"syscall"
)

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
