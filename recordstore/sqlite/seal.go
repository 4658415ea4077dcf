// Seal: a live file becomes a standalone file that holds exactly the
// caller's tables, in journal_mode=DELETE with no -wal or -shm beside it.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// SealStats are the statistics of a sealed file: the rows of each of its
// tables (SQLite's own excluded) and its size in bytes.
type SealStats struct {
	Tables    map[string]int64
	SizeBytes int64
}

// bookkeepingTables are the engine's tables Seal drops; their indexes go
// with them. Kind tables are data and stay.
var bookkeepingTables = []string{
	"record_spool_batches", "record_appends", "record_streams", "record_kinds", "record_meta",
}

// Seal steps, named for the failure seam sealStep.
const (
	sealStepDropped = "dropped" // bookkeeping tables dropped, still WAL
	sealStepJournal = "journal" // journal mode is DELETE
	sealStepClosed  = "closed"  // connection closed
)

// Seal's connection: busy_timeout 5s, and the journal mode it wants.
const (
	sealBusyTimeout = "5000" // ms
	sealPragmaParam = "_pragma"
	sealJournalWant = "delete"
)

// sealStep is called after each named step of Seal; an error stops Seal
// there, as a crash would (tests set it).
var sealStep = func(string) error { return nil }

// Seal turns the file at path, a live file no process writes any more
// (Rotate returned it, or its owner is gone and the store's lock is held),
// into a sealed file. On ONE connection (busy_timeout 5s, the driver's
// default synchronous) it drops the bookkeeping tables in one transaction
// (record_meta, record_kinds, record_streams, record_appends,
// record_spool_batches, with their indexes; kind tables stay), switches to
// journal_mode=DELETE (checkpointing and removing the WAL), calls inspect
// on that connection when it is not nil, counts the rows of every table,
// closes, checks that no -wal or -shm remains and stats the size.
//
// A missing path fails with an error wrapping recordstore.ErrNotFound and
// creates nothing. When another connection holds the file, so that SQLite
// keeps it in WAL mode, Seal fails with an error wrapping ErrSealBusy: the
// bookkeeping tables may be dropped already (the file is no live file any
// more) and a later Seal finishes the work. An error of inspect is
// returned as it is, with the file sealed. Seal is idempotent: sealing a
// sealed file succeeds with the same statistics; a Seal that failed or was
// killed at any point leaves a file that a later Seal seals.
func Seal(ctx context.Context, path string, inspect func(ctx context.Context, conn *sql.Conn) error) (SealStats, error) {
	return SealWith(ctx, path, SealOptions{Inspect: inspect})
}

// SealOptions are SealWith's options.
type SealOptions struct {
	// Inspect is Seal's inspect: called on the sealing connection once
	// the file is sealed, when not nil.
	Inspect func(ctx context.Context, conn *sql.Conn) error
	// BeforeCommit, when set, is called just before the COMMIT of the
	// transaction that drops the bookkeeping tables, as
	// Options.BeforeCommit is in a backend's write transactions: a writer
	// that lost its right to write (a lease across hosts) refuses there.
	// Its error rolls the transaction back and is Seal's error; the file
	// is unchanged (still a live file, in WAL mode).
	BeforeCommit func() error
}

// SealWith is Seal with its options (see Seal for what it does and what
// is on disk when it fails).
func SealWith(ctx context.Context, path string, opts SealOptions) (SealStats, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return SealStats{}, notFound("seal %s: no such file", path)
		}
		return SealStats{}, fmt.Errorf("seal %s: %w", path, err)
	}
	stats, err := seal(ctx, path, opts.Inspect, opts.BeforeCommit)
	if err != nil {
		return SealStats{}, fmt.Errorf("seal %s: %w", path, err)
	}
	return stats, nil
}

// seal is Seal's list of steps.
func seal(ctx context.Context, path string, inspect func(ctx context.Context, conn *sql.Conn) error, before func() error) (stats SealStats, err error) {
	q := url.Values{}
	q.Add(sealPragmaParam, "busy_timeout("+sealBusyTimeout+")")
	db, err := sql.Open("sqlite", fileURI(path, "mode=rw")+"&"+q.Encode())
	if err != nil {
		return stats, fmt.Errorf("open: %w", err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return stats, fmt.Errorf("open: %w", err)
	}
	defer conn.Close()
	if err := dropBookkeeping(ctx, conn, before); err != nil {
		return stats, err
	}
	if err := sealStep(sealStepDropped); err != nil {
		return stats, err
	}
	if err := journalDelete(ctx, conn); err != nil {
		return stats, err
	}
	if err := sealStep(sealStepJournal); err != nil {
		return stats, err
	}
	if inspect != nil {
		if err := inspect(ctx, conn); err != nil {
			return stats, err
		}
	}
	if stats.Tables, err = countTables(ctx, conn); err != nil {
		return stats, err
	}
	if err := errors.Join(conn.Close(), db.Close()); err != nil {
		return stats, fmt.Errorf("close: %w", err)
	}
	if err := sealStep(sealStepClosed); err != nil {
		return stats, err
	}
	return sealedSize(path, stats)
}

// dropBookkeeping drops the bookkeeping tables that exist, in one
// transaction; before, when set, may refuse its COMMIT.
func dropBookkeeping(ctx context.Context, conn *sql.Conn, before func() error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	for _, t := range bookkeepingTables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+quote(t)); err != nil {
			_ = tx.Rollback()
			return sealBusy("drop "+t, err)
		}
	}
	if before != nil {
		if err := before(); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return sealBusy("commit", err)
	}
	return nil
}

// journalDelete switches the file to journal_mode=DELETE; SQLite answers
// with the mode it is in, which stays wal while another connection has
// the file open.
func journalDelete(ctx context.Context, conn *sql.Conn) error {
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil {
		return sealBusy("journal mode", err)
	}
	if !strings.EqualFold(mode, sealJournalWant) {
		return fmt.Errorf("%w: journal mode stays %q", ErrSealBusy, mode)
	}
	return nil
}

// sealBusy wraps err in ErrSealBusy when SQLite reports the file busy or
// locked by another connection.
func sealBusy(what string, err error) error {
	if isBusy(err) {
		return fmt.Errorf("%w: %s: %w", ErrSealBusy, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// countTables counts the rows of every table but SQLite's own.
func countTables(ctx context.Context, conn *sql.Conn) (map[string]int64, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("list tables: %w", err)
		}
		names = append(names, n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	out := make(map[string]int64, len(names))
	for _, n := range names {
		var c int64
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+quote(n)).Scan(&c); err != nil {
			return nil, fmt.Errorf("count rows of %s: %w", n, err)
		}
		out[n] = c
	}
	return out, nil
}

// sealedSize checks that SQLite left no -wal or -shm beside the sealed
// file and returns stats with its size.
func sealedSize(path string, stats SealStats) (SealStats, error) {
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); err == nil {
			return stats, fmt.Errorf("%w: %s remains after close", ErrSealBusy, p)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return stats, fmt.Errorf("stat: %w", err)
	}
	stats.SizeBytes = fi.Size()
	return stats, nil
}
