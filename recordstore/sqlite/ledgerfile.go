// Ledger files: a SQLite file that holds only a ledger (record_meta with
// the epoch, record_spool_batches), kept beside live files that are sealed
// away, so that the outcome of a batch applied to one of them stays
// answerable; and looking a batch up in the ledgers of closed files.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ledgerFileBusy is the busy timeout of the connections of KeepLedger and
// LedgerOutcome: another process may be writing the same file.
const ledgerFileBusy = 10 * time.Second

// KeepLedger copies the ledger rows of the file from into the ledger file
// at keeper, in one transaction: a batch keeper holds already gets from's
// row (from is the newer record of it), and keeper's epoch becomes the
// higher of its own and from's. Rows ingested before drop are removed in
// the same transaction (the zero time removes none). keeper is created
// (0600, WAL, synchronous FULL) when missing; a file with no ledger, or
// no file at from, copies nothing. Options.CarryFrom accepts a ledger
// file like any earlier live file.
//
// It reads from on a read-only connection, so that from may be the live
// file of a running owner, or one it left behind. On error keeper is as it
// was, or created with an empty ledger.
func KeepLedger(ctx context.Context, keeper, from string, drop time.Time) error {
	keeper, err := filepath.Abs(keeper)
	if err != nil {
		return fmt.Errorf("keep the ledger of %s: %w", from, err)
	}
	rows, epoch, err := readLedgerFile(ctx, from)
	if err != nil {
		return fmt.Errorf("keep the ledger of %s: %w", from, err)
	}
	if err := createLive(keeper); err != nil {
		return fmt.Errorf("keep the ledger of %s: create %s: %w", from, keeper, err)
	}
	db, err := sql.Open("sqlite", keeperDSN(keeper))
	if err != nil {
		return fmt.Errorf("keep the ledger of %s: open %s: %w", from, keeper, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	err = inKeeperTx(ctx, db, func(tx *sql.Tx) error {
		for _, ddl := range append([]string{bookkeepingDDL[0]}, ledgerDDL...) {
			if _, err := tx.ExecContext(ctx, ddl); err != nil {
				return fmt.Errorf("create ledger: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO record_meta (key, value) VALUES ('epoch', ?1)
			ON CONFLICT (key) DO UPDATE SET value = max(value, ?1)`, epoch); err != nil {
			return fmt.Errorf("set epoch: %w", err)
		}
		put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO record_spool_batches
			(batch_id, producer, producer_seq, epoch, outcome, results, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("copy ledger: %w", err)
		}
		defer put.Close()
		for _, r := range rows {
			if _, err := put.ExecContext(ctx, r[:]...); err != nil {
				return fmt.Errorf("copy ledger row of batch %v: %w", r[0], err)
			}
		}
		if !drop.IsZero() {
			if _, err := tx.ExecContext(ctx, `DELETE FROM record_spool_batches WHERE ingested_at < ?1`,
				recordstore.FormatDatetime(drop)); err != nil {
				return fmt.Errorf("sweep ledger: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep the ledger of %s in %s: %w", from, keeper, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("keep the ledger of %s: close %s: %w", from, keeper, err)
	}
	return fixModes(keeper)
}

// keeperDSN is the connection string of a ledger file's writer: WAL,
// synchronous FULL (a commit survives a power loss), BEGIN IMMEDIATE.
func keeperDSN(path string) string {
	return fileURI(path, "mode=rw") + "&" + ledgerBusyParam() +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
}

// ledgerBusyParam is the busy timeout parameter of every connection to a
// ledger file.
func ledgerBusyParam() string {
	return "_pragma=busy_timeout(" + fmt.Sprint(ledgerFileBusy.Milliseconds()) + ")"
}

// inKeeperTx runs fn in one transaction on db.
func inKeeperTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ledgerRow is one row of record_spool_batches, in ledger column order.
type ledgerRow [ledgerWidth]any

// readLedgerFile returns the ledger rows and the epoch of the file at path,
// read on a read-only connection; none when it is missing, empty, or has
// no ledger.
func readLedgerFile(ctx context.Context, path string) ([]ledgerRow, int64, error) {
	db, ok, err := openLedgerReader(ctx, path)
	if err != nil || !ok {
		return nil, 0, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	// One read transaction: the epoch and the rows of one snapshot.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, 0, err
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()
	if has, err := connHasLedger(ctx, conn); err != nil || !has {
		return nil, 0, err
	}
	var epoch sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT max(value) FROM record_meta WHERE key = 'epoch'`).Scan(&epoch); err != nil {
		return nil, 0, fmt.Errorf("read epoch: %w", err)
	}
	q, err := conn.QueryContext(ctx, `SELECT batch_id, producer, producer_seq, epoch, outcome, results, ingested_at FROM record_spool_batches`)
	if err != nil {
		return nil, 0, fmt.Errorf("read ledger: %w", err)
	}
	defer q.Close()
	var out []ledgerRow
	for q.Next() {
		var (
			id, producer, outcome, results, at string
			seq, ep                            int64
		)
		if err := q.Scan(&id, &producer, &seq, &ep, &outcome, &results, &at); err != nil {
			return nil, 0, fmt.Errorf("read ledger: %w", err)
		}
		out = append(out, ledgerRow{id, producer, seq, ep, outcome, results, at})
	}
	if err := q.Err(); err != nil {
		return nil, 0, fmt.Errorf("read ledger: %w", err)
	}
	return out, epoch.Int64, nil
}

// openLedgerReader opens path read-only; ok is false, with no error, when
// there is no file or it is empty.
func openLedgerReader(ctx context.Context, path string) (*sql.DB, bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false, err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, false, nil
	}
	db, err := sql.Open("sqlite", fileURI(abs, "mode=ro")+"&"+ledgerBusyParam())
	if err != nil {
		return nil, false, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		if _, serr := os.Stat(abs); errors.Is(serr, fs.ErrNotExist) {
			return nil, false, nil // moved away meanwhile
		}
		return nil, false, err
	}
	return db, true, nil
}

// connHasLedger reports whether the file of conn has a ledger and the
// record_meta table.
func connHasLedger(ctx context.Context, conn *sql.Conn) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('record_spool_batches', 'record_meta')`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for the ledger: %w", err)
	}
	return n == 2, nil
}

// LedgerOutcome looks batch id up in the ledgers of files, in order, each
// read on its own read-only connection: the first file whose ledger holds
// it answers, exactly as BatchOutcome would. A file that is missing (or
// goes away meanwhile), empty, or without a ledger is skipped; none
// holding it is an error wrapping recordstore.ErrNotFound. It writes
// nothing.
func LedgerOutcome(ctx context.Context, files []string, id string) (recordstore.BatchResult, error) {
	var errs []error
	for _, f := range files {
		res, found, err := ledgerFileGet(ctx, f, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("batch outcome %s in %s: %w", id, f, err))
			continue
		}
		if found {
			return res, nil
		}
	}
	if len(errs) > 0 {
		return recordstore.BatchResult{}, errors.Join(errs...)
	}
	return recordstore.BatchResult{}, notFound("batch %s is in none of %d ledgers", id, len(files))
}

// ledgerFileGet is the ledger row of batch id in the file at path.
func ledgerFileGet(ctx context.Context, path, id string) (recordstore.BatchResult, bool, error) {
	db, ok, err := openLedgerReader(ctx, path)
	if err != nil || !ok {
		return recordstore.BatchResult{}, false, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return recordstore.BatchResult{}, false, err
	}
	defer conn.Close()
	// One read transaction: a seal may drop the ledger meanwhile.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return recordstore.BatchResult{}, false, err
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()
	if has, err := connHasLedger(ctx, conn); err != nil || !has {
		return recordstore.BatchResult{}, false, err
	}
	return ledgerGet(conn.QueryRowContext(ctx, sqlLedgerGet, id), id)
}
