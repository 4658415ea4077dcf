// Inserting an append's rows under the kind's conflict policy: a plain
// INSERT without a key; with a key, INSERT ... ON CONFLICT DO NOTHING and,
// on a conflict, skip, replace, or last-writer-wins (or, for lww on a
// bound table that allows it, one upsert a row: lwwupsert.go).

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// ctxCheckEvery is how many rows are inserted between checks of ctx: rows
// are executed with a context that cannot be cancelled, because the driver
// starts a watcher goroutine per statement for one that can.
const ctxCheckEvery = 256

// insertRows inserts the feed's rows into the stream's current generation
// at seqs s.high+1..., counting in res what was appended, skipped and
// replaced. It does not advance s. conn is the connection tx runs on, or
// nil when the caller has none at hand (see insertBulk). A row a bound
// table's own constraints refuse (a CHECK, a NOT NULL, another UNIQUE
// index) is an ErrInvalid error: bad input, not a failure of the store.
func (t *table) insertRows(ctx context.Context, tx *sql.Tx, conn *sql.Conn, s *streamRow, feed *rowFeed, res *recordstore.AppendResult) (err error) {
	if t.layout.bound {
		defer func() {
			if err != nil && isConstraintError(err) {
				err = recordstore.Invalidf("table %s refuses a row: %w", t.name, err)
			}
		}()
	}
	start := 0
	if len(t.keyIdx) == 0 {
		done, err := t.insertBatches(ctx, tx, conn, s, feed)
		if err != nil {
			return err
		}
		res.Appended = int64(done)
		start = done
	}
	ins := tx.StmtContext(ctx, t.insert)
	var c *conflicts
	if len(t.keyIdx) > 0 {
		c = t.newConflicts(ctx, tx, s.no)
		if t.layout.bound && t.layout.seqStored {
			used, err := autoincrementSeq(ctx, tx, t.name)
			if err != nil {
				return err
			}
			defer func() {
				if err == nil && res.Skipped > 0 {
					err = t.restoreAutoincrement(ctx, tx, max(used, s.high+res.Appended))
				}
			}()
		}
	}
	// up is the single-statement lww write when the table allows it, and
	// last the connection's last_insert_rowid, by which upsertRow tells an
	// insert from an update (see lwwupsert.go); a long run of rows goes
	// to the driver directly (upsertDirect).
	var up *sql.Stmt
	var last int64
	if c != nil {
		if up, last, err = t.lwwUpsert(ctx, tx); err != nil {
			return err
		}
	}
	bg := context.WithoutCancel(ctx)
	args := make([]any, 2+len(t.kind.Columns))
	args[0] = s.no
	direct := up != nil && conn != nil
	for i := start; i < feed.len(); i++ {
		if direct && feed.len()-i >= upsertDirectMin && last != s.high+res.Appended+1 {
			from := i
			if i, last, err = t.upsertDirect(ctx, conn, s, feed, i, last, res); err != nil || i == feed.len() {
				return err
			}
			// It stops early at a row whose seq is the last rowid (as is
			// the first row of a new stream, right after the stream's own
			// INSERT, which the condition above leaves to the generic path
			// below). Stopped without a row written, the driver has no
			// direct path: database/sql from here on.
			direct = i > from
		}
		if err := feed.wait(i + 1); err != nil {
			return err
		}
		v := feed.row(i)
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		seq := s.high + res.Appended + 1
		args[1] = seq
		copy(args[2:], v)
		// A row whose seq is the last rowid already takes the generic path,
		// after which the next seq is past it unless the row was skipped.
		if up != nil && last != seq {
			if last, err = upsertRow(bg, up, args, seq, last, res); err != nil {
				return fmt.Errorf("insert row %d: %w", i+1, err)
			}
			feed.release(i, i+1)
			continue
		}
		r, err := ins.ExecContext(bg, args...)
		if err != nil {
			return fmt.Errorf("insert row %d: %w", i+1, err)
		}
		if c == nil {
			res.Appended++
			feed.release(i, i+1)
			continue
		}
		if err := c.settle(bg, r, ins, args, v, res); err != nil {
			return fmt.Errorf("insert row %d: %w", i+1, err)
		}
		feed.release(i, i+1)
	}
	return nil
}

// restoreAutoincrement puts a bound AUTOINCREMENT table's sqlite_sequence
// back to used when an append's skipped rows raised it: SQLite counts the
// id of an INSERT ... ON CONFLICT DO NOTHING that stored nothing as used,
// and a new generation of the stream, which starts after sqlite_sequence
// (see bindStreamTx), would then start after an id no row ever had.
func (t *table) restoreAutoincrement(ctx context.Context, tx *sql.Tx, used int64) error {
	if typ, err := objectType(ctx, tx, "sqlite_sequence"); err != nil || typ != "table" {
		return err // no AUTOINCREMENT table in the file: nothing was raised
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = ?1 WHERE name = ?2 COLLATE NOCASE AND seq > ?1`, used, t.name); err != nil {
		return fmt.Errorf("restore sqlite_sequence of %s: %w", t.name, err)
	}
	return nil
}

// insertBatches inserts as many leading rows of the feed as fit the
// multi-row INSERTs (a kind without a key: every row is stored) and returns
// how many it inserted; the rest is left for the single-row insert. A
// large feed goes through the driver directly (insertBulk) when conn, the
// connection tx runs on, is known.
func (t *table) insertBatches(ctx context.Context, tx *sql.Tx, conn *sql.Conn, s *streamRow, feed *rowFeed) (int, error) {
	n := feed.len()
	width := len(t.kind.Columns)
	done := 0
	if conn != nil && n >= bulkMin {
		n, err := t.insertBulk(ctx, conn, s, feed)
		if err != nil {
			return n, err
		}
		done = n
	}
	var args []any
	bg := context.WithoutCancel(ctx)
	for _, b := range t.batch {
		if n-done < b.rows {
			continue
		}
		if args == nil {
			args = make([]any, 2+width*b.rows)
			args[0] = s.no
		}
		st := tx.StmtContext(ctx, b.st)
		for n-done >= b.rows {
			if err := ctx.Err(); err != nil {
				return done, err
			}
			if err := feed.wait(done + b.rows); err != nil {
				return done, err
			}
			a := args[:2+width*b.rows]
			a[1] = s.high + int64(done) + 1
			for r := 0; r < b.rows; r++ {
				copy(a[2+r*width:2+(r+1)*width], feed.row(done+r))
			}
			if _, err := st.ExecContext(bg, a...); err != nil {
				return done, fmt.Errorf("insert rows %d-%d: %w", done, done+b.rows-1, err)
			}
			feed.release(done, done+b.rows)
			done += b.rows
		}
	}
	return done, nil
}

// bulkMin is the smallest feed that insertBulk inserts: below it, the
// statement it prepares for the append would cost more than it saves.
const bulkMin = 1024

// insertBulk inserts the feed's rows, from the first, by the largest
// multi-row INSERT for as long as a whole one is left, and returns how many
// it inserted. It prepares that INSERT on the driver connection under
// conn (inside the transaction running there) and hands the driver the
// values as they are: stored values (see recordstore.Values) are driver
// values already. Through database/sql, each statement would check and
// copy every argument into a fresh slice, about a tenth of a large
// insert's time. On error, what it inserted stays in the transaction, which
// the caller rolls back.
func (t *table) insertBulk(ctx context.Context, conn *sql.Conn, s *streamRow, feed *rowFeed) (done int, err error) {
	if len(t.batch) == 0 {
		return 0, nil
	}
	b := t.batch[0]
	width := len(t.kind.Columns)
	bg := context.WithoutCancel(ctx)
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return nil // left to database/sql
		}
		st, err := pc.PrepareContext(bg, b.sql)
		if err != nil {
			return fmt.Errorf("prepare bulk insert: %w", err)
		}
		defer st.Close()
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			return nil
		}
		args := make([]driver.NamedValue, 2+width*b.rows)
		for i := range args {
			args[i].Ordinal = i + 1
		}
		args[0].Value = s.no
		n := feed.len()
		for n-done >= b.rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := feed.wait(done + b.rows); err != nil {
				return err
			}
			args[1].Value = s.high + int64(done) + 1
			a := args[2:]
			for r := 0; r < b.rows; r++ {
				for c, v := range feed.row(done + r) {
					a[r*width+c].Value = v
				}
			}
			if _, err := ex.ExecContext(bg, args); err != nil {
				return fmt.Errorf("insert rows %d-%d: %w", done, done+b.rows-1, err)
			}
			feed.release(done, done+b.rows)
			done += b.rows
		}
		return nil
	})
	return done, err
}

// conflicts resolves key conflicts of one append.
type conflicts struct {
	t      *table
	policy recordstore.OnConflict
	del    *sql.Stmt // deletes the stored row with the key (replace), or only when it loses (lww)
	args   []any     // stream number, key values..., [version, tiebreak]
}

func (t *table) newConflicts(ctx context.Context, tx *sql.Tx, stream int64) *conflicts {
	c := &conflicts{t: t, policy: t.kind.Policy()}
	switch c.policy {
	case recordstore.ConflictReplace:
		c.del = tx.StmtContext(ctx, t.deleteKey)
	case recordstore.ConflictLWW:
		c.del = tx.StmtContext(ctx, t.deleteLoser)
	}
	n := 1 + len(t.keyIdx)
	if t.verIdx >= 0 {
		n++
		if t.tieIdx >= 0 {
			n++
		}
	}
	c.args = make([]any, n)
	c.args[0] = stream
	return c
}

// settle looks at the result of an INSERT ... ON CONFLICT DO NOTHING: a
// row was stored (appended), or its key is stored already, and the policy
// decides: skip it, or delete the stored row (replace, or lww when the
// stored one loses) and insert again at the same seq.
func (c *conflicts) settle(ctx context.Context, r sql.Result, ins *sql.Stmt, insArgs []any, v recordstore.Values, res *recordstore.AppendResult) error {
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 1 {
		res.Appended++
		return nil
	}
	if c.policy == recordstore.ConflictSkip {
		res.Skipped++
		return nil
	}
	for i, at := range c.t.keyIdx {
		c.args[1+i] = v[at]
	}
	if c.t.verIdx >= 0 {
		c.args[1+len(c.t.keyIdx)] = v[c.t.verIdx]
		if c.t.tieIdx >= 0 {
			c.args[2+len(c.t.keyIdx)] = v[c.t.tieIdx]
		}
	}
	dr, err := c.del.ExecContext(ctx, c.args...)
	if err != nil {
		return err
	}
	if n, err = dr.RowsAffected(); err != nil {
		return err
	}
	if n == 0 { // lww: the stored row wins
		res.Skipped++
		return nil
	}
	if _, err := ins.ExecContext(ctx, insArgs...); err != nil {
		return err
	}
	res.Replaced += n
	res.Appended++
	return nil
}

// lowSeqTx recomputes the stream's lowest stored seq (HighSeq+1 when no
// row is stored).
func (t *table) lowSeqTx(ctx context.Context, tx *sql.Tx, s *streamRow) error {
	var low sql.NullInt64
	if err := tx.StmtContext(ctx, t.minSeq).QueryRowContext(ctx, s.no).Scan(&low); err != nil {
		return fmt.Errorf("read lowest seq of %s: %w", s.id, err)
	}
	if low.Valid {
		s.low = low.Int64
	} else {
		s.low = s.high + 1
	}
	return nil
}
