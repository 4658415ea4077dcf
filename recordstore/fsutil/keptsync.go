package fsutil

import (
	"fmt"
	"os"
	"sync"
)

// KeptSync fsyncs one file again and again through a descriptor kept
// open, instead of opening the file by its path for every fsync
// (SyncFile): a commit path that fsyncs a file after each commit saves
// the path lookup, the open and the close. Before each fsync it checks
// that the descriptor's file is still the one at the path: one whose
// links are all gone (the file was removed, or another renamed over it)
// is closed and the path opened again, so that the fsync never lands on
// a file nobody can reach any more. Where the link count cannot be read
// (see linkCount) it opens the path every time, as SyncFile does.
//
// It is safe for concurrent use. Close releases the descriptor; a
// KeptSync closed can still Sync (it opens the path again).
//
// One made by KeepDataSync flushes the file's data and only the metadata
// needed to read that data back (fdatasync on Linux, see DataSyncer),
// not its times: for a file that is only ever written in place or grown,
// such as SQLite's WAL, that is as durable as an fsync and skips the
// inode write that a changed modification time alone would cost.
type KeptSync struct {
	h        *Helper
	path     string
	dataOnly bool
	mu       sync.Mutex
	f        File
}

// KeepSync returns a KeptSync of path that opens files through h's FS.
// Nothing is opened before the first Sync.
func (h *Helper) KeepSync(path string) *KeptSync {
	return &KeptSync{h: h, path: path}
}

// KeepDataSync is KeepSync with each Sync flushing the data only
// (DataSyncer's DataSync when the opened File has it, its Sync
// otherwise). What it makes durable: every byte written to the file
// before the Sync and the file's size, so a file grown by the writes
// reads back whole after a power loss. What it does not: the file's
// times and mode, nor its folder entry (as with KeepSync, a file just
// created needs a SyncDir of its own). A failed data sync is reported
// and handled as a failed fsync (ErrSync).
func (h *Helper) KeepDataSync(path string) *KeptSync {
	return &KeptSync{h: h, path: path, dataOnly: true}
}

// Sync fsyncs the file at the path, as SyncFile does (data-syncs it for
// a KeptSync made by KeepDataSync): an error wrapping ErrSync when the
// fsync fails (the descriptor is then closed: the next
// Sync opens the path again, and the caller must treat the data as
// possibly lost), the open's error (fs.ErrNotExist when there is no file
// at the path) otherwise.
func (k *KeptSync) Sync() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f != nil && !stillLinked(k.f) {
		_ = k.f.Close()
		k.f = nil
	}
	if k.f == nil {
		f, err := k.h.FS.OpenFile(k.path, os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		k.f = f
	}
	if err := k.flush(); err != nil {
		_ = k.f.Close()
		k.f = nil
		return syncErr(k.path, err)
	}
	return nil
}

// flush fsyncs the kept descriptor, or data-syncs it for KeepDataSync.
func (k *KeptSync) flush() error {
	if k.dataOnly {
		if ds, ok := k.f.(DataSyncer); ok {
			return ds.DataSync()
		}
	}
	return k.f.Sync()
}

// Close closes the kept descriptor, if any.
func (k *KeptSync) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return nil
	}
	err := k.f.Close()
	k.f = nil
	if err != nil {
		return fmt.Errorf("close %s: %w", k.path, err)
	}
	return nil
}

// stillLinked reports whether f's file still has a name (its link count,
// read from the descriptor, is above zero). A file whose count cannot be
// read counts as unlinked: it is opened again.
func stillLinked(f File) bool {
	st, ok := f.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := st.Stat()
	if err != nil {
		return false
	}
	n, ok := linkCount(fi)
	return ok && n > 0
}

// Path returns the path of the file k fsyncs.
func (k *KeptSync) Path() string { return k.path }
