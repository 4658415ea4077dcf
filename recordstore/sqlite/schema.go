// The bookkeeping tables (record_meta, record_kinds, record_streams,
// record_appends) and the catalog version check run when the file opens.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// bookkeepingDDL creates the bookkeeping tables. Times are stored as
// recordstore.DatetimeLayout text, so text order is time order.
var bookkeepingDDL = []string{
	// Key/value facts about the file: catalog_version (and later epoch).
	`CREATE TABLE IF NOT EXISTS record_meta (
		key   TEXT PRIMARY KEY NOT NULL,
		value ANY
	) WITHOUT ROWID`,
	// One row per declared kind. name_fold is the lowercase name: SQLite
	// table names are case-insensitive, so two kinds may not share it.
	`CREATE TABLE IF NOT EXISTS record_kinds (
		name       TEXT PRIMARY KEY NOT NULL,
		name_fold  TEXT NOT NULL UNIQUE,
		table_name TEXT NOT NULL,
		schema     TEXT NOT NULL,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	) WITHOUT ROWID`,
	// One row per stream ever created. A deleted or swept stream keeps its
	// row as a tombstone (deleted = 1) so that its next generation number
	// is higher than every earlier one. no is the stream's number: kind
	// tables and record_appends refer to the stream by it (an integer key
	// is smaller and faster than the id text, which may be 200 bytes).
	`CREATE TABLE IF NOT EXISTS record_streams (
		no         INTEGER PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		kind       TEXT NOT NULL,
		generation INTEGER NOT NULL,
		high_seq   INTEGER NOT NULL,
		low_seq    INTEGER NOT NULL,
		total      INTEGER NOT NULL,
		sealed     INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		expires_at TEXT,
		deleted    INTEGER NOT NULL DEFAULT 0
	)`,
	`CREATE INDEX IF NOT EXISTS record_streams_kind ON record_streams (kind, id)`,
	`CREATE INDEX IF NOT EXISTS record_streams_expires ON record_streams (expires_at)
		WHERE expires_at IS NOT NULL AND deleted = 0`,
	// One row per append that stored rows: the seq range it wrote and when.
	// Trim and row retention delete by it. Keyed by appended_at inside the
	// stream (its number) so that "appends before t" is a range scan.
	`CREATE TABLE IF NOT EXISTS record_appends (
		stream      INTEGER NOT NULL,
		appended_at TEXT NOT NULL,
		from_seq    INTEGER NOT NULL,
		to_seq      INTEGER NOT NULL,
		generation  INTEGER NOT NULL,
		PRIMARY KEY (stream, appended_at, from_seq)
	) WITHOUT ROWID`,
}

// initSchema creates the bookkeeping tables if needed and checks (or, in a
// new file, records) the catalog version, in one transaction. On error
// nothing was written.
func initSchema(ctx context.Context, db *sql.DB) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin schema: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for _, ddl := range bookkeepingDDL {
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("create bookkeeping tables: %w", err)
		}
	}
	if err := checkCatalogVersion(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit schema: %w", err)
	}
	return nil
}

func checkCatalogVersion(ctx context.Context, tx *sql.Tx) error {
	var v int64
	err := tx.QueryRowContext(ctx, `SELECT value FROM record_meta WHERE key = 'catalog_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, `INSERT INTO record_meta (key, value) VALUES ('catalog_version', ?)`, int64(CatalogVersion))
		if err != nil {
			return fmt.Errorf("record catalog version: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read catalog version: %w", err)
	case v != CatalogVersion:
		return fmt.Errorf("%w: file has catalog version %d, this build writes %d", ErrCatalogVersion, v, CatalogVersion)
	}
	return nil
}
