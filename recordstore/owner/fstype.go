// Refusing file systems where flock and SQLite's WAL are unreliable: network
// and FUSE file systems. The probe itself is per platform.

package owner

import (
	"fmt"
	"path/filepath"
)

// CheckFileSystem returns an error wrapping ErrUnsafeFileSystem when dir is
// on a network or FUSE file system (NFS, SMB/CIFS, 9p, FUSE and its fuse.*
// subtypes, virtiofs, Ceph, AFS, Lustre, GFS2, OCFS2), where advisory locks
// and SQLite's shared-memory WAL index do not hold across hosts. Nothing is
// written.
func CheckFileSystem(dir string) error {
	name, remote, err := fileSystemType(dir)
	if err != nil {
		return fmt.Errorf("statfs %s: %w", filepath.Clean(dir), err)
	}
	if remote {
		return fmt.Errorf("%w: %s is on %s; keep the store on a local disk", ErrUnsafeFileSystem, filepath.Clean(dir), name)
	}
	return nil
}
