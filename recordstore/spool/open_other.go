// Opening data files without following symlinks (non-unix: check with
// Lstat first; the plain-file check after opening still applies).

//go:build !unix

package spool

import (
	"fmt"
	"os"
)

func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symlink", path)
	}
	return os.Open(path)
}
