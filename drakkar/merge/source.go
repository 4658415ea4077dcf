// One source's story through the output, in the order it is lived: the
// source is attached to the output's connection (ATTACH read-only, of a
// private copy when its header says WAL), its tables are copied in one
// transaction (worker rows, then events ordered by ts and states ordered
// by updated_at, each with one INSERT … SELECT), it is detached and its
// copy released, and a source whose copy failed part-way (a corrupt
// page, a row that breaks a constraint) is salvaged first: what can be
// read of it is copied row by row, in order, and it is reported partial.

package merge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// mergeOne copies one source, skipping a duplicate.
func (w *output) mergeOne(ctx context.Context, path string, seen map[string]bool) (SourceResult, error) {
	key, err := filepath.Abs(path)
	if err != nil {
		key = filepath.Clean(path)
	}
	if seen[key] {
		return SourceResult{Path: path, Status: StatusSkipped, Err: unreadable(path, ErrDuplicateSource)}, nil
	}
	seen[key] = true
	return w.copySource(ctx, path)
}

// copySource attaches one source, copies it in one transaction and
// detaches it. A source that fails part-way is salvaged (unless
// AllOrNothing). A failure of the source is reported in the SourceResult
// (partial or skipped); the error return is for a failure of the merge
// itself (the context, the output, a rollback or a detach).
func (w *output) copySource(ctx context.Context, path string) (SourceResult, error) {
	sr := SourceResult{Path: path, Status: StatusSkipped}
	s, err := w.attach(ctx, path)
	if err != nil {
		return w.sourceFailed(ctx, sr, err)
	}
	sr.Kind = s.kind
	err = w.inTx(ctx, func() error { return w.copyTables(ctx, s, &sr) })
	var ferr error
	switch {
	case err == nil:
		sr.Status = StatusMerged
	case w.allOrNothing || ctx.Err() != nil || isFatal(err):
		sr.Workers, sr.Events, sr.States = 0, 0, 0
		sr, ferr = w.sourceFailed(ctx, sr, err)
	default:
		w.log.Warn("merge_source_salvage", "source", path, "error", err)
		sr, ferr = w.salvage(ctx, s, sr, err)
	}
	if derr := w.detachErr(s); derr != nil {
		return sr, derr
	}
	return sr, ferr
}

// attach checks the source's header, makes a private copy when it is a
// WAL-header file, attaches it read-only and immutable, and reads its
// tables. On error nothing stays attached and the copy is removed.
func (w *output) attach(ctx context.Context, path string) (*source, error) {
	wal, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	s := &source{path: path, file: path}
	if wal {
		if s.copy, err = privateCopy(ctx, path, w.tempDir); err != nil {
			return nil, err
		}
		s.file = s.copy
	}
	uri := sqlite.FileURI(s.file, url.Values{"mode": {"ro"}, "immutable": {"1"}})
	if _, err := w.conn.ExecContext(ctx, "ATTACH DATABASE ? AS "+srcSchema, uri); err != nil {
		w.release(s)
		return nil, fmt.Errorf("attach: %w", err)
	}
	if err := s.readSchema(ctx, w.conn); err != nil {
		return nil, errors.Join(err, w.detachErr(s))
	}
	return s, nil
}

// copyTables copies the source's worker rows, events and states.
func (w *output) copyTables(ctx context.Context, s *source, sr *SourceResult) error {
	workerID, err := w.copyWorkers(ctx, s, sr)
	if err != nil {
		return fmt.Errorf("copy workers: %w", err)
	}
	counts := []*int64{&sr.Events, &sr.States}
	for i, t := range rowTables(s.kind) {
		if *counts[i], err = w.copyRows(ctx, s, t, workerID, "", nil); err != nil {
			return fmt.Errorf("copy %s: %w", t.src, err)
		}
	}
	return nil
}

// copyWorkers adds the source's worker rows. A recorder source adds one
// row (its worker_config, or a placeholder named after the file) whose id
// it returns; a merged source adds each of its rows and records the id
// each one got in temp.wmap.
func (w *output) copyWorkers(ctx context.Context, s *source, sr *SourceResult) (int64, error) {
	if s.kind == KindMerged {
		n, err := w.copyMergedWorkers(ctx, s)
		sr.Workers = n
		return 0, err
	}
	names := columnNames(dbfiles.WorkerConfigColumns[1:])
	base := filepath.Base(s.path)
	if have := s.cols["worker_config"]; have != nil {
		q := fmt.Sprintf("INSERT INTO main.workers (%s, source_file) SELECT %s, ? FROM %s.worker_config AS s ORDER BY s.id LIMIT 1",
			quoteList(names), selectList(names, have), srcSchema)
		r, err := w.conn.ExecContext(ctx, q, base)
		if err != nil {
			return 0, err
		}
		if n, err := r.RowsAffected(); err == nil && n == 1 {
			sr.Workers = 1
			return r.LastInsertId()
		}
	}
	r, err := w.conn.ExecContext(ctx, "INSERT INTO main.workers (worker_name, source_file) VALUES (?, ?)",
		strings.TrimSuffix(base, dbfiles.DBSuffix), base)
	if err != nil {
		return 0, err
	}
	sr.Workers = 1
	return r.LastInsertId()
}

// copyMergedWorkers copies every workers row of a merged source, in id
// order, keeping its columns (source_file included), and maps each old id
// to the new one in temp.wmap.
func (w *output) copyMergedWorkers(ctx context.Context, s *source) (int64, error) {
	if _, err := w.conn.ExecContext(ctx, "DELETE FROM temp.wmap"); err != nil {
		return 0, err
	}
	names := append(columnNames(dbfiles.WorkerConfigColumns[1:]), "source_file")
	rows, err := w.readRows(ctx, fmt.Sprintf("SELECT s.id, %s FROM %s.workers AS s ORDER BY s.id",
		selectList(names, s.cols["workers"]), srcSchema), len(names)+1)
	if err != nil {
		return 0, err
	}
	ins := fmt.Sprintf("INSERT INTO main.workers (%s) VALUES (%s)", quoteList(names), placeholders(len(names)))
	for _, row := range rows {
		r, err := w.conn.ExecContext(ctx, ins, row[1:]...)
		if err != nil {
			return 0, err
		}
		id, err := r.LastInsertId()
		if err != nil {
			return 0, err
		}
		if _, err := w.conn.ExecContext(ctx, "INSERT INTO temp.wmap (old, new) VALUES (?, ?)", row[0], id); err != nil {
			return 0, err
		}
	}
	return int64(len(rows)), nil
}

// copyRows copies the rows of the source's table t that match where (a
// condition on the alias s with its args; "" for every row) into the
// output with one INSERT … SELECT ordered by t.order then id, and returns
// how many it copied. A column the source lacks (an older file) reads as
// NULL. Rows of a recorder source get workerID; rows of a merged source
// get their worker_id remapped through temp.wmap. A source without the
// table has no rows.
func (w *output) copyRows(ctx context.Context, s *source, t rowTable, workerID int64, where string, args []any) (int64, error) {
	have := s.cols[t.src]
	if have == nil {
		return 0, nil
	}
	names := columnNames(t.cols[1:])
	wid := "?"
	all := []any{workerID}
	if s.kind == KindMerged {
		wid = "(SELECT new FROM temp.wmap WHERE old = s.worker_id)"
		all = nil
	}
	if where != "" {
		where = " WHERE " + where
	}
	q := fmt.Sprintf("INSERT INTO main.%s (worker_id, %s) SELECT %s, %s FROM %s.%s AS s%s ORDER BY s.%s, s.id",
		t.dst, quoteList(names), wid, selectList(names, have), srcSchema, quote(t.src), where, quote(t.order))
	r, err := w.conn.ExecContext(ctx, q, append(all, args...)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// readRows reads every row of q, n columns each. It is used for the
// workers table only, which holds one row per original source file.
func (w *output) readRows(ctx context.Context, q string, n int) ([][]any, error) {
	rows, err := w.conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// sourceFailed sorts a failure: the context's end and an error writing
// the output fail the merge; anything else skips the source.
func (w *output) sourceFailed(ctx context.Context, sr SourceResult, err error) (SourceResult, error) {
	if cerr := ctx.Err(); cerr != nil {
		return sr, cerr
	}
	if isFatal(err) {
		return sr, fmt.Errorf("merge %s: %w", sr.Path, err)
	}
	sr.Err = unreadable(sr.Path, err)
	return sr, nil
}

// detachErr detaches the source and removes its private copy. A failed
// detach fails the merge: the next source could not be attached.
func (w *output) detachErr(s *source) error {
	defer w.release(s)
	if _, err := w.conn.ExecContext(context.Background(), "DETACH DATABASE "+srcSchema); err != nil {
		return fatalError{fmt.Errorf("detach %s: %w", s.path, err)}
	}
	return nil
}

// release removes the source's private copy, if any.
func (w *output) release(s *source) {
	if s.copy != "" {
		removeCopy(s.copy)
	}
}

// salvage copies what can be read of a source whose whole copy failed with
// cause, in one transaction: its worker rows, then each row table in order
// until the first row that cannot be read or inserted. The rows are read
// on a connection of their own, so that the source's read error cannot
// poison the output's transaction. The result is merged when every row
// was read after all, partial when some rows are in the output (Err says
// where the copy stopped), skipped when none is. The error return is for a
// failure of the merge itself.
func (w *output) salvage(ctx context.Context, s *source, sr SourceResult, cause error) (SourceResult, error) {
	sr.Workers, sr.Events, sr.States = 0, 0, 0
	if _, err := w.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return sr, fmt.Errorf("begin salvage: %w", err)
	}
	stop, err := w.salvageTables(ctx, s, &sr)
	if err == nil && stop != nil && sr.Events+sr.States == 0 {
		err = stop // only a worker row would be left: nothing worth keeping
	}
	if err == nil {
		if _, cerr := w.conn.ExecContext(ctx, "COMMIT"); cerr != nil {
			err = fmt.Errorf("commit salvage: %w", cerr)
		}
	}
	if err != nil {
		_, _ = w.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		sr.Workers, sr.Events, sr.States = 0, 0, 0
		if ctx.Err() != nil || isFatal(err) {
			return sr, err
		}
		return w.sourceFailed(ctx, sr, cause)
	}
	if stop == nil {
		sr.Status = StatusMerged
		return sr, nil
	}
	sr.Status, sr.Err = StatusPartial, unreadable(sr.Path, stop)
	return sr, nil
}

// salvageTables copies the worker rows and as many rows of each table as
// can be read. stop is the error that ended a table's copy early; err is
// a failure that leaves nothing to keep (the worker rows, the source
// cannot be opened again, the merge's own failure).
func (w *output) salvageTables(ctx context.Context, s *source, sr *SourceResult) (stop, err error) {
	workerID, err := w.copyWorkers(ctx, s, sr)
	if err != nil {
		return nil, fmt.Errorf("copy workers: %w", err)
	}
	ids, err := w.workerMap(ctx, s, workerID)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", sqlite.FileURI(s.file, url.Values{"mode": {"ro"}, "immutable": {"1"}}))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	counts := []*int64{&sr.Events, &sr.States}
	for i, t := range rowTables(s.kind) {
		n, terr := w.salvageRows(ctx, db, s, t, ids)
		*counts[i] = n
		switch {
		case terr == nil:
		case ctx.Err() != nil || isFatal(terr):
			return nil, terr
		case stop == nil:
			stop = fmt.Errorf("%s: stopped after %d rows: %w", t.src, n, terr)
		}
	}
	return stop, nil
}

// workerMap maps a row's worker_id in the source to its id in the output:
// every row of a recorder source to workerID (key 0), a merged source's
// rows through temp.wmap.
func (w *output) workerMap(ctx context.Context, s *source, workerID int64) (map[int64]int64, error) {
	if s.kind != KindMerged {
		return map[int64]int64{0: workerID}, nil
	}
	rows, err := w.conn.QueryContext(ctx, "SELECT old, new FROM temp.wmap")
	if err != nil {
		return nil, fmt.Errorf("read worker ids: %w", err)
	}
	defer rows.Close()
	ids := map[int64]int64{}
	for rows.Next() {
		var o, n int64
		if err := rows.Scan(&o, &n); err != nil {
			return nil, fmt.Errorf("read worker ids: %w", err)
		}
		ids[o] = n
	}
	return ids, rows.Err()
}

// salvageRows reads the rows of t from db in order and inserts them one by
// one until the end or the first failure, which it returns with the count
// copied. A failed insert is undone by SQLite on its own (a statement is
// atomic); the transaction stays.
func (w *output) salvageRows(ctx context.Context, db *sql.DB, s *source, t rowTable, ids map[int64]int64) (int64, error) {
	have := s.cols[t.src]
	if have == nil {
		return 0, nil
	}
	names := columnNames(t.cols[1:])
	wid := "0"
	if s.kind == KindMerged {
		wid = "s.worker_id"
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT %s, %s FROM %s AS s ORDER BY s.%s, s.id",
		wid, selectList(names, have), quote(t.src), quote(t.order)))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	ins, err := w.conn.PrepareContext(ctx, fmt.Sprintf("INSERT INTO main.%s (worker_id, %s) VALUES (%s)",
		t.dst, quoteList(names), placeholders(len(names)+1)))
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	vals := make([]any, len(names)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		old, _ := vals[0].(int64)
		id, ok := ids[old]
		if !ok {
			return n, fmt.Errorf("worker_id %v has no workers row", vals[0])
		}
		vals[0] = id
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
