// Refusing file systems where flock and SQLite's WAL are unreliable: network
// and FUSE file systems. The probe itself is per platform.

package owner

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckFileSystem returns an error wrapping ErrUnsafeFileSystem when dir is
// on a network or FUSE file system (NFS, SMB/CIFS, 9p, FUSE and its fuse.*
// subtypes, virtiofs, Ceph, AFS, Lustre, GFS2, OCFS2), where advisory locks
// and SQLite's shared-memory WAL index do not hold across hosts. Nothing is
// written.
func CheckFileSystem(dir string) error {
	name, remote, err := probeFileSystem(dir)
	if err != nil {
		return fmt.Errorf("statfs %s: %w", filepath.Clean(dir), err)
	}
	if remote {
		return fmt.Errorf("%w: %s is on %s; keep the store on a local disk", ErrUnsafeFileSystem, filepath.Clean(dir), name)
	}
	return nil
}

// probeFileSystem is the platform's probe (fileSystemType); specs stand in
// for a network file system through it, which no test machine mounts.
var probeFileSystem = fileSystemType

// classifyName reports whether a file-system type name, as statfs gives it
// on macOS and the BSDs (f_fstypename), names a network or user-space file
// system: the name table of the platforms without Linux's magic numbers.
func classifyName(name string) bool {
	switch strings.ToLower(name) {
	case "nfs", "nfs4", "smbfs", "smb", "smb2", "cifs", "afpfs", "webdav", "9p", "p9fs",
		"ceph", "afs", "lustre", "gfs2", "ocfs2", "virtiofs", "puffs", "perfuse":
		return true
	}
	return strings.Contains(strings.ToLower(name), "fuse")
}

// cString returns the bytes of a C string field up to its first NUL.
func cString[T byte | int8](field []T) string {
	b := make([]byte, 0, len(field))
	for _, c := range field {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
