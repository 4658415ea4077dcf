// Checking a whole store file for consistency before it is trusted: a
// file restored from a replica, before it replaces a live file, and both
// sides of a replica verification.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
)

// StreamCount is one live stream of a checked file: its bookkeeping row
// and what its kind table really holds.
type StreamCount struct {
	// Stream and Kind name the stream and its kind.
	Stream string `json:"stream"`
	Kind   string `json:"kind"`
	// Generation, HighSeq and Total are the stream's bookkeeping row.
	Generation int64 `json:"generation"`
	HighSeq    int64 `json:"highSeq"`
	Total      int64 `json:"total"`
	// Rows is the number of rows the kind table holds for the stream, and
	// MaxSeq the highest seq among them (0 when none).
	Rows   int64 `json:"rows"`
	MaxSeq int64 `json:"maxSeq"`
}

// FileReport is what CheckFile and CountStreams found in a store file.
type FileReport struct {
	// Epoch is the file's epoch (0 when no writable open recorded one).
	Epoch int64 `json:"epoch"`
	// Kinds is the number of declared kinds.
	Kinds int `json:"kinds"`
	// LedgerRows is the number of batches in the spool ledger (0 when the
	// file has no ledger: no batch was ever applied to it).
	LedgerRows int64 `json:"ledgerRows"`
	// Streams are the live (not deleted) streams, by id.
	Streams []StreamCount `json:"streams"`
}

// CheckFile proves that the SQLite file at path is a whole, sound store
// file of this build, without writing it (it is opened immutable: nothing
// may write it meanwhile, and no -wal beside it is read). It runs PRAGMA
// integrity_check, then the engine's own checks: the bookkeeping tables
// are there with this build's catalog version (ErrCatalogVersion
// otherwise); the epoch and the ledger read; every kind's stored schema
// parses and its table is there and fits it (a bound kind's table is
// checked against the kind as Open checks it); every live stream's kind is
// declared, and its kind table holds exactly the stream's total of rows,
// none with a seq above its high seq.
//
// A file that fails a check gives an error wrapping ErrCorrupt that names
// the first failure (a missing file is recordstore.ErrNotFound). The
// report is returned with a nil error only.
func CheckFile(ctx context.Context, path string) (FileReport, error) {
	return readFile(ctx, path, FileOptions{Immutable: true}, true)
}

// CountStreams returns the report of CheckFile for the store file at path
// without its integrity_check and without failing on counts that
// disagree: it reads a live file, which its owner may be writing (opened
// read-only, through the -wal), in one read transaction. For comparing a
// live store with a restored copy of it (replica verification).
func CountStreams(ctx context.Context, path string) (FileReport, error) {
	return readFile(ctx, path, FileOptions{ReadOnly: true, BusyTimeout: ledgerFileBusy}, false)
}

func readFile(ctx context.Context, path string, o FileOptions, strict bool) (rep FileReport, err error) {
	db, err := OpenFile(ctx, path, o)
	if err != nil {
		if isDamaged(err) {
			err = fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
		return rep, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	defer func() {
		if err != nil && isDamaged(err) && !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
	}()
	if strict {
		// The checks read every page of the file, some more than once:
		// one mapping instead of a pread per page. Only here, where the
		// file is opened immutable (nobody writes or truncates it, CheckFile's
		// contract); CountStreams reads a live file its owner writes.
		if _, err := db.ExecContext(ctx, "PRAGMA mmap_size = 1099511627776"); err != nil {
			return rep, err
		}
		if err := integrityCheck(ctx, db); err != nil {
			return rep, err
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	tx, err := beginRead(ctx, conn)
	if err != nil {
		return rep, err
	}
	defer func() { _ = tx.Rollback() }()
	rep, err = readReport(ctx, tx, strict)
	if err != nil {
		return FileReport{}, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// integrityCheck runs PRAGMA integrity_check and turns its complaint into
// an ErrCorrupt error.
func integrityCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil
	}
	if len(lines) > 3 {
		lines = append(lines[:3], fmt.Sprintf("and %d more", len(lines)-3))
	}
	return corrupt("integrity_check: %v", lines)
}

// readReport reads the report inside tx; with strict set, counts that
// disagree with the bookkeeping are an ErrCorrupt error.
func readReport(ctx context.Context, tx *sql.Tx, strict bool) (FileReport, error) {
	var rep FileReport
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('record_meta', 'record_kinds', 'record_streams', 'record_appends')`).Scan(&n)
	if err != nil {
		return rep, fmt.Errorf("read catalog: %w", err)
	}
	if n < 4 {
		return rep, corrupt("the bookkeeping tables are missing: not a store file")
	}
	var v int64
	err = tx.QueryRowContext(ctx, `SELECT value FROM record_meta WHERE key = 'catalog_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return rep, corrupt("no catalog version recorded")
	case err != nil:
		return rep, fmt.Errorf("read catalog version: %w", err)
	case v != CatalogVersion:
		return rep, fmt.Errorf("%w: file has catalog version %d, this build reads %d", ErrCatalogVersion, v, CatalogVersion)
	}
	if rep.Epoch, err = readEpoch(ctx, tx); err != nil {
		return rep, err
	}
	if rep.LedgerRows, err = countLedger(ctx, tx); err != nil {
		return rep, err
	}
	layouts, err := readLayouts(ctx, tx)
	if err != nil {
		return rep, err
	}
	rep.Kinds = len(layouts)
	rows, err := tx.QueryContext(ctx, `SELECT no, id, kind, generation, high_seq, total
		FROM record_streams WHERE deleted = 0 ORDER BY id`)
	if err != nil {
		return rep, fmt.Errorf("read streams: %w", err)
	}
	type row struct {
		no int64
		c  StreamCount
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.no, &r.c.Stream, &r.c.Kind, &r.c.Generation, &r.c.HighSeq, &r.c.Total); err != nil {
			_ = rows.Close()
			return rep, fmt.Errorf("read streams: %w", err)
		}
		all = append(all, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return rep, fmt.Errorf("read streams: %w", err)
	}
	for _, r := range all {
		lay, ok := layouts[r.c.Kind]
		if !ok {
			return rep, corrupt("stream %s is of kind %s, which the catalog does not declare", r.c.Stream, r.c.Kind)
		}
		q := `SELECT count(*), coalesce(max(` + lay.seq + `), 0) FROM ` + quote(lay.table)
		var args []any
		if !lay.bound {
			q += ` WHERE ` + colStream + ` = ?1`
			args = append(args, r.no)
		}
		if err := tx.QueryRowContext(ctx, q, args...).Scan(&r.c.Rows, &r.c.MaxSeq); err != nil {
			return rep, fmt.Errorf("count the rows of stream %s: %w", r.c.Stream, err)
		}
		if strict && r.c.Rows != r.c.Total {
			return rep, corrupt("stream %s records %d rows, its kind table holds %d", r.c.Stream, r.c.Total, r.c.Rows)
		}
		if strict && r.c.MaxSeq > r.c.HighSeq {
			return rep, corrupt("stream %s has a row at seq %d above its high seq %d", r.c.Stream, r.c.MaxSeq, r.c.HighSeq)
		}
		rep.Streams = append(rep.Streams, r.c)
	}
	sort.Slice(rep.Streams, func(i, j int) bool { return rep.Streams[i].Stream < rep.Streams[j].Stream })
	return rep, nil
}

// countLedger returns the number of ledger rows, 0 when the file has no
// ledger.
func countLedger(ctx context.Context, tx *sql.Tx) (int64, error) {
	var has int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'record_spool_batches'`).Scan(&has)
	if err != nil || has == 0 {
		return 0, err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM record_spool_batches`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the ledger: %w", err)
	}
	return n, nil
}

// kindLayout is where a kind's rows are and how its seq is read.
type kindLayout struct {
	table string
	tableLayout
}

// readLayouts reads every kind of the catalog: its schema must parse, and
// its table must be there (a bound kind's table must fit the kind).
func readLayouts(ctx context.Context, tx *sql.Tx) (map[string]kindLayout, error) {
	all, err := readKindRows(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]kindLayout, len(all))
	for _, e := range all {
		k, err := parseSchema(e.name, e.schema)
		if err != nil {
			return nil, err
		}
		lay := engineLayout
		if k.Table != nil {
			if lay, err = inspectBound(ctx, tx, &k); err != nil {
				return nil, corrupt("kind %s: %v", e.name, err)
			}
		} else {
			var n int
			err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1`, e.table).Scan(&n)
			if err != nil {
				return nil, fmt.Errorf("read kind %s: %w", e.name, err)
			}
			if n == 0 {
				return nil, corrupt("kind %s: its table %s is missing", e.name, e.table)
			}
		}
		out[e.name] = kindLayout{table: e.table, tableLayout: lay}
	}
	return out, nil
}
