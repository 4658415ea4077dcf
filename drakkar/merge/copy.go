// Copying one attached source into the output: its worker rows, then its
// events ordered by ts and its states ordered by updated_at, each table
// with one INSERT … SELECT, the whole source in one transaction.

package merge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

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

// isFatal reports whether err fails the merge rather than the source.
func isFatal(err error) bool {
	var fe fatalError
	return errors.As(err, &fe) || outputFault(err)
}

// outputFault reports whether a SQLite error is the output's fault (full
// disk, a write or fsync error, no memory) rather than the source's.
func outputFault(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY:
		return true
	case sqlite3.SQLITE_IOERR:
		switch se.Code() {
		case sqlite3.SQLITE_IOERR_READ, sqlite3.SQLITE_IOERR_SHORT_READ:
			return false
		}
		return true
	}
	return false
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

// fatalError marks a failure met while handling a source that is the
// merge's own (a detach that failed), not the source's.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }
func (e fatalError) Unwrap() error { return e.err }

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

// rowTable is a table whose rows are copied from a source: events, or the
// worker states.
type rowTable struct {
	src, dst string           // the source's table, the output's
	cols     []dbfiles.Column // the recorder table's shape, id first
	order    string           // the column rows are copied in order of (then id)
}

// rowTables are the row tables of a source of kind, events first.
func rowTables(kind string) []rowTable {
	states := "worker_state"
	if kind == KindMerged {
		states = "worker_states"
	}
	return []rowTable{
		{src: "events", dst: "events", cols: dbfiles.EventColumns, order: "ts"},
		{src: states, dst: "worker_states", cols: dbfiles.WorkerStateColumns, order: "updated_at"},
	}
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

// columnNames lists the names of cols.
func columnNames(cols []dbfiles.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// selectList is the SELECT list of names over the source alias "s", with
// NULL for a column the source lacks.
func selectList(names []string, have map[string]bool) string {
	parts := make([]string, len(names))
	for i, n := range names {
		if have[n] {
			parts[i] = "s." + quote(n)
		} else {
			parts[i] = "NULL"
		}
	}
	return strings.Join(parts, ", ")
}

// quoteList is names quoted and joined by commas.
func quoteList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = quote(n)
	}
	return strings.Join(parts, ", ")
}

// quote quotes a SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// placeholders is n comma-separated "?".
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
