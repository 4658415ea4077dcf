package fsutil

import "golang.org/x/sys/unix"

// StartWriteback starts writing the file's bytes [off, off+n) to the disk
// (sync_file_range with SYNC_FILE_RANGE_WRITE) and returns without waiting.
func (f osFile) StartWriteback(off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
