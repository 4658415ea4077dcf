//go:build !linux

package fsutil

// StartWriteback does nothing where there is no sync_file_range: the
// Sync that follows writes everything.
func (f osFile) StartWriteback(off, n int64) {}
