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
type KeptSync struct {
	h    *Helper
	path string
	mu   sync.Mutex
	f    File
}

// KeepSync returns a KeptSync of path that opens files through h's FS.
// Nothing is opened before the first Sync.
func (h *Helper) KeepSync(path string) *KeptSync {
	return &KeptSync{h: h, path: path}
}

// Sync fsyncs the file at the path, as SyncFile does: an error wrapping
// ErrSync when the fsync fails (the descriptor is then closed: the next
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
	if err := k.f.Sync(); err != nil {
		_ = k.f.Close()
		k.f = nil
		return syncErr(k.path, err)
	}
	return nil
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
