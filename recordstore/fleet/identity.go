// The identity row: every store a fleet makes records its key in a table
// of its own, so that a file copied or renamed by hand is told apart from
// the store its path names. Read and written on a plain SQLite connection
// beside the engine's.

package fleet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

// IdentityTable is the table that records a store's key: one row, written
// when the store is created, never changed.
const IdentityTable = "fleet_identity"

const identityDDL = `CREATE TABLE ` + IdentityTable + ` (key TEXT NOT NULL PRIMARY KEY, created_at TEXT NOT NULL)`

// errNoStore says that no file is at a store path.
var errNoStore = errors.New("no store file")

// fileURI is the SQLite URI of path (sqlite.FileURI) with params (mode=rw
// ...), busy_timeout set.
func fileURI(path string, params url.Values) string {
	q := url.Values{"_pragma": {"busy_timeout(5000)"}}
	for k, vs := range params {
		q[k] = append(q[k], vs...)
	}
	return sqlite.FileURI(path, q)
}

// openRaw opens one plain connection on the file at path; readOnly makes it
// query_only. It is not opened mode=ro: a read-only connection to a WAL
// file that no other process has open creates the -wal and -shm and
// cannot remove them, so listing or checking a store would leave both
// beside it; a read-write connection that is the file's last removes them
// as it closes (SQLite opens a file the process may not write read-only
// anyway). A missing file is errNoStore; one removed before the
// connection opens (it opens at the first query) fails that query, and
// nothing is created in its place (mode=rw).
func openRaw(path string, readOnly bool) (*sql.DB, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoStore
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	params := url.Values{"mode": {"rw"}} // never create: the file may go between the stat and the connection
	if readOnly {
		params.Add("_pragma", "query_only(1)")
	}
	db, err := sql.Open("sqlite", fileURI(path, params))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// openImmutable opens one connection on the file at path that reads it as
// an immutable file (mode=ro, immutable=1): no locks taken, no -wal or
// -shm made, nothing on disk changed. What it reads is right only if no
// process writes the file meanwhile: its callers check its answers again
// on a plain connection (see readFile).
func openImmutable(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", fileURI(path, url.Values{"mode": {"ro"}, "immutable": {"1"}}))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// readIdentity returns the key the store file at path records, "" when it
// records none (no identity table or row), errNoStore when no file is
// there.
func readIdentity(ctx context.Context, path string) (string, error) {
	db, err := openRaw(path, true)
	if err != nil {
		return "", err
	}
	defer db.Close()
	id, err := identityOf(ctx, db, path)
	if _, serr := os.Stat(path); err != nil && errors.Is(serr, fs.ErrNotExist) {
		return "", errNoStore // removed meanwhile
	}
	return id, err
}

// identityOf reads the identity row on db.
func identityOf(ctx context.Context, db *sql.DB, path string) (string, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, IdentityTable).Scan(&n); err != nil {
		return "", fmt.Errorf("read the identity of %s: %w", path, err)
	}
	if n == 0 {
		return "", nil
	}
	var key string
	err := db.QueryRowContext(ctx, `SELECT key FROM `+IdentityTable+` LIMIT 1`).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the identity of %s: %w", path, err)
	}
	return key, nil
}

// writeIdentity records k in the new store file at path, in one
// transaction, and leaves no -wal beside it (the connection's close
// checkpoints it). On error the file may hold no identity: it is a staging
// file, removed by the caller.
func writeIdentity(ctx context.Context, path string, k Key, now time.Time) error {
	db, err := openRaw(path, false)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return fmt.Errorf("record the identity of %s: %w", path, err)
	}
	_, err = tx.ExecContext(ctx, identityDDL)
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO `+IdentityTable+` (key, created_at) VALUES (?, ?)`, k.String(), now.UTC().Format(time.RFC3339Nano))
	}
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err == nil {
		_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record the identity of %s: %w", path, err)
	}
	return nil
}

// integrity runs PRAGMA integrity_check on db and returns its complaint,
// "" when the file is sound.
func integrity(ctx context.Context, db *sql.DB, quick bool) (string, error) {
	pragma := "integrity_check"
	if quick {
		pragma = "quick_check"
	}
	rows, err := db.QueryContext(ctx, "PRAGMA "+pragma)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return "", nil
	}
	return strings.Join(lines, "; "), nil
}

// statSize returns the size of the file at p.
func statSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
