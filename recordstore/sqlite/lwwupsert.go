// The single-statement lww write of a bound table that stores the seq:
// INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE <the stored row loses>,
// one statement a row where the generic path (insert, delete the loser,
// insert again) runs three for a row whose key is stored.
//
// It keeps the generic path's results exactly. A row stored under a new
// key is appended at the next seq; a stored row that loses is overwritten
// with the incoming row and moved to the next seq (its rowid, or its
// INTEGER PRIMARY KEY column, set to it), which is what deleting it and
// inserting the incoming row at that seq leaves; a stored row that wins
// stays and the row is skipped. The three outcomes are told apart by the
// statement's change count (0: skipped) and by the connection's
// last_insert_rowid, which an INSERT sets to the new row's rowid (the seq)
// and the UPDATE of an upsert leaves as it was: when it equals the seq
// before the statement (a row of another table happened to get that
// rowid), that row takes the generic path. An AUTOINCREMENT table's
// sqlite_sequence is raised by a skipped row as by the generic path's
// insert, and put back the same way (restoreAutoincrement).
//
// An UPDATE differs from a DELETE and an INSERT where the table has
// triggers (others fire: a search index's, or one another program
// created in the file) or columns the kind does not write (the UPDATE
// would keep their values where the INSERT gives them their defaults);
// such a table, and one that is not an ordinary table, keeps the generic
// path. (Foreign keys would differ too, but the writer never enforces
// them: foreign_keys is off, and a bound DDL cannot turn it on.) That is
// checked inside the append's transaction whenever the file's schema
// version changed since the last check, so a trigger or a column added
// after the kind was bound is seen.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
)

// upsertCheck remembers the schema version in which a table was last
// checked for the upsert, and the answer: version<<1 | usable (0 when
// never checked). Appends run one at a time on the writer; the atomic
// only keeps a table shared by concurrent readers of it race-free.
type upsertCheck struct{ v atomic.Int64 }

// prepareUpsert prepares t's upsert on the writer w when t's layout has
// one (upsertLWWSQL). A statement SQLite refuses to prepare leaves t on
// the generic path, which has worked for the table since it was bound
// (the upsert is only a faster way of doing the same).
func (t *table) prepareUpsert(ctx context.Context, w *sql.DB) {
	q := upsertLWWSQL(&t.kind, t.name, t.layout)
	if q == "" {
		return
	}
	st, err := w.PrepareContext(ctx, q)
	if err != nil {
		return
	}
	t.upsert, t.upsertAt = st, &upsertCheck{}
}

// lwwUpsert returns t's upsert bound to tx and the connection's
// last_insert_rowid when the upsert may be used for this append, nil
// otherwise (see the file comment).
func (t *table) lwwUpsert(ctx context.Context, tx *sql.Tx) (*sql.Stmt, int64, error) {
	if t.upsert == nil {
		return nil, 0, nil
	}
	var last, schema int64
	if err := tx.QueryRowContext(ctx, `SELECT last_insert_rowid(), schema_version FROM pragma_schema_version`).Scan(&last, &schema); err != nil {
		return nil, 0, fmt.Errorf("read schema version: %w", err)
	}
	seen := t.upsertAt.v.Load()
	if seen>>1 != schema {
		ok, err := t.upsertUsableTx(ctx, tx)
		if err != nil {
			return nil, 0, err
		}
		seen = schema << 1
		if ok {
			seen |= 1
		}
		t.upsertAt.v.Store(seen)
	}
	if seen&1 == 0 {
		return nil, 0, nil
	}
	return tx.StmtContext(ctx, t.upsert), last, nil
}

// upsertUsableTx reports whether an UPDATE of t's table leaves what a
// DELETE and an INSERT leave: an ordinary table without triggers whose
// columns are the kind's and the seq's.
func (t *table) upsertUsableTx(ctx context.Context, tx *sql.Tx) (bool, error) {
	var typ string
	var triggers int
	err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT type FROM pragma_table_list(?1)), ''),
	(SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE)`, t.name).Scan(&typ, &triggers)
	if err != nil {
		return false, fmt.Errorf("read triggers of %s: %w", t.name, err)
	}
	if typ != "table" || triggers > 0 {
		return false, nil
	}
	cols, err := readColumns(ctx, tx, t.name)
	if err != nil {
		return false, err
	}
	for _, c := range cols {
		if !strings.EqualFold(quote(c.name), t.layout.seq) && !slices.ContainsFunc(t.kind.Columns,
			func(k recordstore.Column) bool { return strings.EqualFold(k.Name, c.name) }) {
			return false, nil
		}
	}
	return true, nil
}

// upsertRow writes one row at seq through the upsert (args as for
// t.insert, seq in args[1]) and counts it in res. last is the connection's
// last_insert_rowid before the statement, which the caller made sure is
// not seq; it returns the value after.
func upsertRow(ctx context.Context, up *sql.Stmt, args []any, seq, last int64, res *recordstore.AppendResult) (int64, error) {
	r, err := up.ExecContext(ctx, args...)
	if err != nil {
		return last, err
	}
	return countUpsert(r, seq, last, res)
}

// countUpsert counts in res the row an upsert at seq wrote, from its result
// r and the last rowid before it (which is not seq), and returns the last
// rowid after it.
func countUpsert(r driver.Result, seq, last int64, res *recordstore.AppendResult) (int64, error) {
	n, err := r.RowsAffected()
	if err != nil {
		return last, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return last, err
	}
	switch {
	case n == 0: // the stored row wins
		res.Skipped++
	case id == seq && id != last: // inserted: a new key
		res.Appended++
	default: // the stored row lost and was overwritten at the new seq
		res.Appended++
		res.Replaced++
	}
	return id, nil
}

// upsertDirectMin is the smallest number of rows upsertDirect writes:
// below it, preparing the statement on the driver connection would cost
// more than it saves.
const upsertDirectMin = 256

// upsertDirect writes the feed's rows from row from on through t's upsert
// as upsertRow does, but on the driver connection under conn (inside the
// transaction running there), as insertBulk does: database/sql's checks
// and copies of every argument are a few percent of an upsert. It stops
// before a row whose seq is the last rowid (the caller writes that one
// through the generic path) and returns the index of the first row not
// written and the last rowid. On error, what it wrote stays in the
// transaction, which the caller rolls back.
func (t *table) upsertDirect(ctx context.Context, conn *sql.Conn, s *streamRow, feed *rowFeed, from int, last int64, res *recordstore.AppendResult) (next int, _ int64, err error) {
	next = from
	bg := context.WithoutCancel(ctx)
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return nil // left to database/sql
		}
		st, err := pc.PrepareContext(bg, upsertLWWSQL(&t.kind, t.name, t.layout))
		if err != nil {
			return fmt.Errorf("prepare lww upsert: %w", err)
		}
		defer st.Close()
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			return nil
		}
		args := make([]driver.NamedValue, 2+len(t.kind.Columns))
		for i := range args {
			args[i].Ordinal = i + 1
		}
		args[0].Value = s.no
		for ; next < feed.len(); next++ {
			if err := feed.wait(next + 1); err != nil {
				return err
			}
			if next%ctxCheckEvery == ctxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			seq := s.high + res.Appended + 1
			if seq == last {
				return nil
			}
			args[1].Value = seq
			for c, v := range feed.row(next) {
				args[2+c].Value = v
			}
			r, err := ex.ExecContext(bg, args)
			if err != nil {
				return fmt.Errorf("insert row %d: %w", next+1, err)
			}
			if last, err = countUpsert(r, seq, last, res); err != nil {
				return fmt.Errorf("insert row %d: %w", next+1, err)
			}
			feed.release(next, next+1)
		}
		return nil
	})
	return next, last, err
}
