// NetBSD file-system probe: statvfs f_fstypename against the name table.

//go:build netbsd

package owner

import "golang.org/x/sys/unix"

func fileSystemType(dir string) (name string, remote bool, err error) {
	var st unix.Statvfs_t
	if err := unix.Statvfs1(dir, &st, unix.ST_WAIT); err != nil {
		return "", false, err
	}
	name = cString(st.Fstypename[:])
	return name, classifyName(name), nil
}
