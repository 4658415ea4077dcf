//go:build !linux

package fsutil

// DataSync is a full fsync where fdatasync is not used: the file's data
// and all of its metadata.
func (f osFile) DataSync() error { return f.File.Sync() }
