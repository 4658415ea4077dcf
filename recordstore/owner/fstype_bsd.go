// FreeBSD and DragonFly file-system probe: statfs f_fstypename against the
// name table.

//go:build freebsd || dragonfly

package owner

import "golang.org/x/sys/unix"

func fileSystemType(dir string) (name string, remote bool, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", false, err
	}
	name = cString(st.Fstypename[:])
	return name, classifyName(name), nil
}
