// Linux file-system probe: statfs magic numbers (see statfs(2) and
// include/uapi/linux/magic.h).

//go:build linux

package owner

import "syscall"

// remoteMagic names the statfs f_type values of file systems we refuse.
// FUSE covers every fuse.* subtype and virtiofs, which mounts as FUSE.
var remoteMagic = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x01021997: "9p",
	0x65735546: "fuse",
	0x00c36400: "ceph",
	0x5346414f: "afs",
	0x6b414653: "kafs",
	0x0bd00bd0: "lustre",
	0x01161970: "gfs2",
	0x7461636f: "ocfs2",
	0x564c:     "ncp",
	0x73757245: "coda",
}

func fileSystemType(dir string) (name string, remote bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false, err
	}
	name, remote = classifyMagic(int64(st.Type))
	return name, remote, nil
}

// classifyMagic maps a statfs type to a name and whether it is refused.
func classifyMagic(magic int64) (string, bool) {
	magic &= 0xffffffff
	if name, ok := remoteMagic[magic]; ok {
		return name, true
	}
	return "local", false
}
