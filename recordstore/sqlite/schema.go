// The bookkeeping tables (record_meta, record_kinds, record_streams,
// record_appends), the catalog version check and the epoch increment run
// when the file opens writable, and the read-only open's checks.

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
	// Key/value facts about the file: catalog_version, epoch.
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

// txBeginner is what initSchema runs its transaction on: the writer's
// *sql.DB, or one *sql.Conn of it holding attached files.
type txBeginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// seed is what initSchema writes into a file besides its bookkeeping
// tables: the ledger rows of attached files, a fixed epoch, kinds.
type seed struct {
	// carry are the schema names of attached files whose ledger rows are
	// copied when the file has no ledger yet (ledger rows already there
	// win: INSERT OR IGNORE).
	carry []string
	// epoch, when > 0, is the epoch the file gets (Rotate: the same
	// writer goes on in another file); otherwise the epoch is incremented
	// above the file's own and every carried file's.
	epoch int64
	// declare, when set, runs last in the transaction (Rotate declares the
	// catalog's kinds there).
	declare func(tx *sql.Tx) error
	// before, when set, is called just before the COMMIT
	// (Options.BeforeCommit): its error rolls everything back.
	before func() error
}

// initSchema creates the bookkeeping tables if needed, checks (or, in a
// new file, records) the catalog version, carries the ledger rows of the
// seed's attached files when the file has no ledger, and increments (or
// sets) the epoch, in one transaction, and returns the new epoch. On error
// nothing was written.
func initSchema(ctx context.Context, db txBeginner, sd seed) (epoch int64, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("begin schema: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for _, ddl := range bookkeepingDDL {
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return 0, fmt.Errorf("create bookkeeping tables: %w", err)
		}
	}
	if err := checkCatalogVersion(ctx, tx); err != nil {
		return 0, err
	}
	carried, err := carryLedgers(ctx, tx, sd.carry)
	if err != nil {
		return 0, err
	}
	if epoch, err = bumpEpoch(ctx, tx, carried, sd.epoch); err != nil {
		return 0, err
	}
	if sd.declare != nil {
		if err := sd.declare(tx); err != nil {
			return 0, err
		}
	}
	if sd.before != nil {
		if err := sd.before(); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit schema: %w", err)
	}
	return epoch, nil
}

// bumpEpoch sets the file's epoch to set when it is > 0, else one above
// both the file's epoch and floor, and returns it.
func bumpEpoch(ctx context.Context, tx *sql.Tx, floor, set int64) (epoch int64, err error) {
	if set > 0 {
		_, err = tx.ExecContext(ctx, `INSERT INTO record_meta (key, value) VALUES ('epoch', ?1)
			ON CONFLICT (key) DO UPDATE SET value = ?1`, set)
		if err != nil {
			return 0, fmt.Errorf("set epoch: %w", err)
		}
		return set, nil
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO record_meta (key, value) VALUES ('epoch', ?1 + 1)
		ON CONFLICT (key) DO UPDATE SET value = max(value, ?1) + 1 RETURNING value`, floor).Scan(&epoch)
	if err != nil {
		return 0, fmt.Errorf("increment epoch: %w", err)
	}
	return epoch, nil
}

// readEpoch returns the epoch stored in the file (0 when no writable open
// ever recorded one).
func readEpoch(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	var epoch int64
	err := q.QueryRowContext(ctx, `SELECT value FROM record_meta WHERE key = 'epoch'`).Scan(&epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read epoch: %w", err)
	}
	return epoch, nil
}

// checkReadable is the read-only open's check of an existing file: the
// bookkeeping tables are there (ErrNotFound when the file was never opened
// writable) and the catalog version is this build's.
func checkReadable(ctx context.Context, db *sql.DB) error {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('record_meta', 'record_kinds', 'record_streams', 'record_appends')`).Scan(&n)
	if err != nil {
		return fmt.Errorf("read catalog: %w", err)
	}
	if n < 4 {
		return notFound("the live file has no catalog yet (it must be opened writable first)")
	}
	var v int64
	err = db.QueryRowContext(ctx, `SELECT value FROM record_meta WHERE key = 'catalog_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound("the live file records no catalog version")
	case err != nil:
		return fmt.Errorf("read catalog version: %w", err)
	case v != CatalogVersion:
		return fmt.Errorf("%w: file has catalog version %d, this build reads %d", ErrCatalogVersion, v, CatalogVersion)
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
