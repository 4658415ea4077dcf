// A source file on its own, before and after it meets the output: its
// header, the private rollback-journal copy of a WAL-header file, and its
// kind and tables' columns as the attached schema tells them.

package merge

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// sqliteMagic is the first 16 bytes of every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// srcSchema is the schema name a source is attached under.
const srcSchema = "src"

// source is one source attached to the output's connection.
type source struct {
	path string // as given
	file string // what is attached: path, or the private copy
	copy string // the private copy, "" when none
	kind string
	cols map[string]map[string]bool // table → its columns; a missing table is absent
}

// readHeader checks that path is a regular file starting with the SQLite
// header and reports whether the header says WAL (bytes 18 and 19, the
// file format write and read versions, are 2 in WAL mode).
func readHeader(path string) (wal bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, recordstore.Errorf(ErrNotSQLite, "not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var hdr [100]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return false, recordstore.Errorf(ErrNotSQLite, "read header: %w", err)
	}
	if !bytes.Equal(hdr[:16], []byte(sqliteMagic)) {
		return false, recordstore.Errorf(ErrNotSQLite, "bad header")
	}
	return hdr[18] == 2 || hdr[19] == 2, nil
}

// privateCopy copies a WAL-header source (and its -wal, when there is
// one) to a dot-prefixed temp file in tempDir, 0600, and switches the copy
// to a rollback journal there, which folds in the copied -wal. The source
// itself is only read. On error the copy and its sidecars are removed. The
// name, .<base>.<16 hex>.src.tmp, is one the archive sweep deletes when a
// crash leaves it behind (".*.tmp" with its sidecars).
func privateCopy(ctx context.Context, path, tempDir string) (string, error) {
	cp := filepath.Join(tempDir, "."+filepath.Base(path)+"."+dbfiles.NewHex16()+".src.tmp")
	err := copyFile(path, cp)
	if err == nil {
		err = copyFile(path+"-wal", cp+"-wal")
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = toRollbackJournal(ctx, cp)
	}
	if err != nil {
		removeCopy(cp)
		return "", fmt.Errorf("private copy of a WAL-header file: %w", err)
	}
	return cp, nil
}

// toRollbackJournal opens the private copy read-write and sets
// journal_mode=DELETE, which checkpoints its -wal and rewrites the header.
func toRollbackJournal(ctx context.Context, path string) error {
	db, err := sqlite.OpenFile(ctx, path, sqlite.FileOptions{MustExist: true})
	if err != nil {
		return err
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("journal mode stayed %q", mode)
	}
	return db.Close()
}

// copyFile copies src to a new file dst, 0600. A missing src is
// fs.ErrNotExist.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fsutil.FileMode)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

// removeCopy removes a private copy and whatever SQLite left beside it.
func removeCopy(cp string) {
	for _, p := range []string{cp, cp + "-wal", cp + "-shm", cp + "-journal"} {
		_ = os.Remove(p)
	}
}

// readSchema lists the source's tables and columns and finds its kind.
func (s *source) readSchema(ctx context.Context, conn *sql.Conn) error {
	s.cols = map[string]map[string]bool{}
	for _, t := range []string{"events", "worker_config", "worker_state", "workers", "worker_states"} {
		cols, err := tableColumns(ctx, conn, t)
		if err != nil {
			return fmt.Errorf("read table %s: %w", t, err)
		}
		if len(cols) > 0 {
			s.cols[t] = cols
		}
	}
	switch {
	case s.cols["workers"] != nil && s.cols["events"]["worker_id"]:
		s.kind = KindMerged
	case s.cols["events"] != nil || s.cols["worker_config"] != nil || s.cols["worker_state"] != nil:
		s.kind = KindRecorder
	default:
		return ErrUnknownFormat
	}
	return nil
}

// tableColumns is the set of the attached source's columns of table; an
// empty set when there is no such table.
func tableColumns(ctx context.Context, conn *sql.Conn, table string) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?, ?)", table, srcSchema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[name] = true
	}
	return cols, rows.Err()
}
