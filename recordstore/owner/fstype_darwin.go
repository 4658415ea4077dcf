// macOS file-system probe: statfs f_fstypename against a table of names.

//go:build darwin

package owner

import (
	"strings"
	"syscall"
)

func fileSystemType(dir string) (name string, remote bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false, err
	}
	b := make([]byte, 0, len(st.Fstypename))
	for _, c := range st.Fstypename {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	name = string(b)
	return name, classifyName(name), nil
}

func classifyName(name string) bool {
	switch name {
	case "nfs", "smbfs", "afpfs", "webdav", "cifs", "9p", "ceph", "afs":
		return true
	}
	return strings.Contains(name, "fuse")
}
