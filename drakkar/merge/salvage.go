// Salvage: when a source fails part-way through its copy (a corrupt page,
// a row that breaks a constraint), copy what can be read of it, in order,
// row by row, and report it partial.

package merge

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

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
