// Carrying the ledger from earlier live files (Options.CarryFrom): the
// files are attached to the writer connection, and their ledger rows are
// copied into a live file that has no ledger yet, in the transaction that
// creates its bookkeeping tables.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

// initSchemaCarrying is initSchema on the writer, with the files of
// Options.CarryFrom attached for the time of its transaction.
func (b *Backend) initSchemaCarrying(ctx context.Context) (int64, error) {
	if len(b.opts.CarryFrom) == 0 {
		return initSchema(ctx, b.w, seed{before: b.opts.BeforeCommit})
	}
	conn, err := b.w.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("carry ledger: %w", err)
	}
	defer conn.Close()
	names, err := attachCarried(ctx, conn, b.live, b.opts.CarryFrom)
	defer detachAll(conn, names)
	if err != nil {
		return 0, err
	}
	return initSchema(ctx, conn, seed{carry: names, before: b.opts.BeforeCommit})
}

// carryStatted is called between attachCarried's stat of a file and its
// ATTACH (tests set it).
var carryStatted = func(path string) {}

// attachCarried attaches each of files that exists, is not live itself,
// and is a database, as carry0, carry1, …, and returns the schema names
// it attached (also with an error: detach them). It never creates a file:
// one removed after its stat is skipped, as is one SQLite says is not a
// database.
func attachCarried(ctx context.Context, conn *sql.Conn, live string, files []string) ([]string, error) {
	var names []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return names, fmt.Errorf("carry ledger of %s: %w", f, err)
		}
		if filepath.Clean(abs) == live {
			continue
		}
		fi, err := os.Stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return names, fmt.Errorf("carry ledger of %s: %w", f, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() == 0 {
			continue // an empty file holds no ledger (and ATTACH would make it a database)
		}
		carryStatted(abs)
		name := "carry" + strconv.Itoa(len(names))
		// mode=rw: a file that goes between the stat and the ATTACH (sealed
		// and moved away) fails the ATTACH instead of coming back empty.
		uri := FileURI(abs, url.Values{"mode": {"rw"}})
		if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ?1 AS `+name, uri); err != nil {
			if _, serr := os.Stat(abs); errors.Is(serr, fs.ErrNotExist) {
				continue // gone meanwhile: it holds no ledger any more
			}
			if isNotADB(err) {
				continue // junk at a live file's name holds no ledger (its owner sets it aside)
			}
			return names, fmt.Errorf("carry ledger of %s: attach: %w", f, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// detachAll detaches the schemas attachCarried attached; SQLite closes
// the files (a file whose -wal it recovered is checkpointed then).
func detachAll(conn *sql.Conn, names []string) {
	for _, n := range names {
		_, _ = conn.ExecContext(context.Background(), `DETACH DATABASE `+n)
	}
}

// carryLedgers copies into the main file, when it has no ledger, the
// ledger rows of the attached schemas that have one, creating the ledger
// (only when there is something to carry), and returns the highest epoch
// the schemas record (0: none). A row the main file holds already wins.
func carryLedgers(ctx context.Context, tx *sql.Tx, schemas []string) (int64, error) {
	if len(schemas) == 0 {
		return 0, nil
	}
	var floor int64
	var from []string
	for _, s := range schemas {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+s+`.sqlite_master WHERE type = 'table'
			AND name IN ('record_spool_batches', 'record_meta')`).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("carry ledger: read %s: %w", s, err)
		}
		if n < 2 {
			continue // sealed, or never given a ledger
		}
		var e sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT max(value) FROM `+s+`.record_meta WHERE key = 'epoch'`).Scan(&e)
		if err != nil {
			return 0, fmt.Errorf("carry ledger: read epoch of %s: %w", s, err)
		}
		floor = max(floor, e.Int64)
		from = append(from, s)
	}
	has, err := txHasLedger(ctx, tx)
	if err != nil || has || len(from) == 0 {
		return floor, err
	}
	for _, ddl := range ledgerDDL {
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return 0, fmt.Errorf("create ledger: %w", err)
		}
	}
	for _, s := range from {
		if err := copyLedger(ctx, tx, s); err != nil {
			return 0, err
		}
	}
	return floor, nil
}

// txHasLedger reports whether the main file has the ledger table.
func txHasLedger(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'record_spool_batches'`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for the ledger: %w", err)
	}
	return n > 0, nil
}

// copyLedger copies the ledger rows of the attached schema into the main
// file's ledger; a batch the main ledger holds already keeps its row.
func copyLedger(ctx context.Context, tx *sql.Tx, schema string) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO main.record_spool_batches
		(batch_id, producer, producer_seq, epoch, outcome, results, ingested_at)
		SELECT batch_id, producer, producer_seq, epoch, outcome, results, ingested_at FROM `+schema+`.record_spool_batches`)
	if err != nil {
		return fmt.Errorf("carry ledger from %s: %w", schema, err)
	}
	return nil
}
