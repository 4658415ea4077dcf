//go:build unix

package fsutil

import (
	"os"
	"syscall"
)

// linkCount returns the link count of the file fi describes (st_nlink).
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true //nolint:unconvert // its type differs across platforms
}
