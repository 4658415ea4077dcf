// The live file's identity: a read-only backend remembers which file it
// opened, so that its promotion never writes a file that was put at the
// path since (the store was deleted, or deleted and made again).

package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fb46ecde/records/recordstore"
)

// ErrLiveFileGone is returned by CheckLiveFile, and by Promote, when the
// live file's path no longer names the file this backend opened: it was
// removed (the store was deleted) or another file was put there (deleted
// and made again, or a copy moved over it). It wraps
// recordstore.ErrNotFound (code not_found): the store this backend opened
// is gone. Nothing is written when it is returned.
var ErrLiveFileGone = fmt.Errorf("%w: the live file was removed or replaced since this store was opened", recordstore.ErrNotFound)

// CheckLiveFile reports whether the live file's path still names the file
// a read-only backend opened: nil when it does; an error wrapping
// ErrLiveFileGone (and recordstore.ErrNotFound) when the path names no
// file or another one; another error when the path cannot be examined. A
// writable backend is its store's writer, which nobody may delete (its
// owner holds the store's lock): it returns nil without looking (after a
// Rotate the live file is the one Rotate made). It reads the path's
// metadata only (one stat) and writes nothing, and answers after Close
// too (of the file the backend had open). The owner package calls it
// before and after it takes a store's lock to promote this backend; a
// fleet calls it after closing a store, before it vouches for the file at
// the path.
func (b *Backend) CheckLiveFile() error {
	b.life.RLock()
	defer b.life.RUnlock()
	return b.checkLiveFileLocked()
}

// checkLiveFileLocked is CheckLiveFile for a caller that holds life.
func (b *Backend) checkLiveFileLocked() error {
	if !b.readOnly || b.opened == nil {
		return nil
	}
	fi, err := os.Stat(b.live)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("store %s: %w (%s does not exist)", b.path, ErrLiveFileGone, b.live)
	case err != nil:
		return fmt.Errorf("store %s: stat live file: %w", b.path, err)
	case !os.SameFile(fi, b.opened):
		return fmt.Errorf("store %s: %w (%s is another file)", b.path, ErrLiveFileGone, b.live)
	}
	return nil
}
