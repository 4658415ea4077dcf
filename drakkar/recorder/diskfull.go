// A full disk: the errors that say so are recordstore.ErrDiskFull, whether
// SQLite (SQLITE_FULL, a -shm that could not grow) or a plain file write
// (ENOSPC) met it.

package recorder

import (
	"errors"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// diskFull returns err as a recordstore.ErrDiskFull error (code disk_full)
// when it says a file system had no space left (sqlite.DiskFull) and it is
// not one already; any other err is returned as it is.
func diskFull(err error) error {
	if err == nil || errors.Is(err, recordstore.ErrDiskFull) || !sqlite.DiskFull(err) {
		return err
	}
	return recordstore.Errorf(recordstore.ErrDiskFull, "%w", err)
}
