//go:build unix

package fleet

import "golang.org/x/sys/unix"

// stampOf returns the stamp of the file at p, not following a symlink.
func stampOf(p string) (stamp, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return stamp{}, false
	}
	return stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true // Dev and Ino differ in type by platform
}
