// Quarantine: a recorder file that holds no recorder tables (an empty file
// left by a crash, junk at a recorder name) can never be sealed; it is set
// aside as <name>.unreadable instead of failing every tick.

package recorder

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// ErrNotRecorderFile is returned by a seal of a file at a recorder name
// that is not a recorder file: it has no events table, or it is not a
// SQLite database at all. errors.Is(err, recordstore.ErrInvalid) holds.
var ErrNotRecorderFile = recordstore.Invalidf("not a recorder file")

// UnreadableSuffix is appended to the name of a file set aside.
const UnreadableSuffix = ".unreadable"

// sqliteNotADB is SQLite's SQLITE_NOTADB result code.
const sqliteNotADB = 26

// checkRecorderTables fails with ErrNotRecorderFile when the file conn is
// on has no events table.
func checkRecorderTables(ctx context.Context, conn *sql.Conn) error {
	var n int
	err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'events'`).Scan(&n)
	if err != nil {
		return fmt.Errorf("look for the events table: %w", err)
	}
	if n == 0 {
		return recordstore.Errorf(ErrNotRecorderFile, "no events table")
	}
	return nil
}

// notRecorderFile reports whether a seal failed because the file is not a
// recorder file: no events table, or SQLite says it is not a database.
func notRecorderFile(err error) bool {
	if errors.Is(err, ErrNotRecorderFile) {
		return true
	}
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == sqliteNotADB
}

// quarantine renames path to path+UnreadableSuffix (durably), logs
// recorder_file_quarantined and drops it from the backlog. When the rename
// fails the file stays in the backlog, and the next try sets it aside.
func (r *Recorder) quarantine(path string, cause error) {
	dest := path + UnreadableSuffix
	if err := fsutil.Rename(path, dest); err != nil {
		r.sealFailed(path, "quarantine", err)
		return
	}
	r.bl.remove(path)
	r.log.Warn("recorder_file_quarantined", "db_path", path, "destination", dest, "reason", cause)
}
