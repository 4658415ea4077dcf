// macOS file-system probe: statfs f_fstypename against the name table.

//go:build darwin

package owner

import "syscall"

func fileSystemType(dir string) (name string, remote bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false, err
	}
	name = cString(st.Fstypename[:])
	return name, classifyName(name), nil
}
