// QueryRows: a recordstore.RowQuery — windows, search, conditions, sort,
// cursor — run as one SELECT on the reader pool.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

var _ recordstore.RowQuerier = (*Backend)(nil)

// QueryRows returns the rows of stream's current generation that q
// selects, in q's order, and the stream's Meta read in the same read
// transaction. q's columns must be the kind's (recordresults checks them;
// an unknown one is ErrInvalid here too). It only reads.
func (b *Backend) QueryRows(ctx context.Context, stream string, q recordstore.RowQuery) (_ []recordstore.Record, _ recordstore.Meta, err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return nil, recordstore.Meta{}, err
	}
	if q.Limit < 0 || q.After < 0 || q.To < 0 {
		return nil, recordstore.Meta{}, recordstore.Invalidf("query %s: negative limit, after or to", stream)
	}
	if err := b.enter(); err != nil {
		return nil, recordstore.Meta{}, err
	}
	defer b.leave()
	for attempt := 0; ; attempt++ {
		recs, m, miss, err := b.queryOnce(ctx, stream, &q)
		if miss == "" || attempt == 2 {
			if err != nil {
				return nil, recordstore.Meta{}, fmt.Errorf("query %s: %w", stream, err)
			}
			return recs, m, nil
		}
		if _, err := b.table(ctx, miss); err != nil {
			return nil, recordstore.Meta{}, fmt.Errorf("query %s: %w", stream, err)
		}
	}
}

// queryOnce is QueryRows in one read transaction; miss names the stream's
// kind when its table is not cached (see scanOnce).
func (b *Backend) queryOnce(ctx context.Context, stream string, q *recordstore.RowQuery) (recs []recordstore.Record, m recordstore.Meta, miss string, err error) {
	tx, err := beginRead(ctx, b.r)
	if err != nil {
		return nil, m, "", fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if rerr := tx.Rollback(); err == nil && rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = rerr
		}
	}()
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.rs.getStream), stream)
	if err != nil {
		return nil, m, "", err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return nil, m, "", notFound("stream %s", stream)
	}
	t := b.tables.get(s.kind)
	if t == nil {
		return nil, m, s.kind, notFound("kind %s of stream %s", s.kind, stream)
	}
	narrow := func(w *whereBuilder, lo, hi int64) (string, error) {
		return t.searchCond(ctx, tx, w, q, s.no, s.high, lo, hi)
	}
	text, args, err := t.querySQL(s.no, q, narrow)
	if err != nil {
		return nil, m, "", err
	}
	rows, err := tx.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, m, "", err
	}
	defer rows.Close()
	hint := s.total
	if q.Limit > 0 {
		hint = min(hint, int64(q.Limit))
	}
	recs, err = t.decodeRows(ctx, sqlRows(rows, len(t.kind.Columns)), hint)
	return recs, s.meta(), "", err
}

// querySQL builds the SELECT of q over the table, with its arguments; the
// stream number is ?1 as in every statement of the table. narrow returns
// the search index's condition for q's Text ("" for none) over the seqs
// lo < seq ≤ hi (hi < 0: no upper bound).
//
// The seq is bounded once on each side (see seqWindow): given two lower
// bounds, SQLite seeks to one of them and tests the other on every row it
// passes, so a paged read of a large stream walked it again from After on
// every page.
func (t *table) querySQL(streamNo int64, q *recordstore.RowQuery, narrow func(w *whereBuilder, lo, hi int64) (string, error)) (string, []any, error) {
	w := &whereBuilder{args: []any{streamNo}}
	seq := t.layout.seq
	w.add(t.layout.streamCond())
	lo, hi := seqWindow(q)
	w.add(seq + " > " + w.arg(lo))
	if hi >= 0 {
		w.add(seq + " <= " + w.arg(hi))
	}
	if q.TimeColumn != "" && (!q.From.IsZero() || !q.Until.IsZero()) {
		col, err := t.column(q.TimeColumn)
		if err != nil {
			return "", nil, err
		}
		if !q.From.IsZero() {
			w.add(col + " >= " + w.arg(recordstore.FormatDatetime(q.From)))
		}
		if !q.Until.IsZero() {
			w.add(col + " < " + w.arg(recordstore.FormatDatetime(q.Until)))
		}
	}
	if q.Text != "" {
		needle := w.arg(recordstore.FoldASCII(q.Text))
		var ors []string
		for _, name := range q.Search {
			col, err := t.column(name)
			if err != nil {
				return "", nil, err
			}
			ors = append(ors, "instr(lower("+col+"), "+needle+") > 0")
		}
		if len(ors) == 0 {
			return "", nil, recordstore.Invalidf("q needs search columns")
		}
		cond, err := narrow(w, lo, hi)
		if err != nil {
			return "", nil, err
		}
		w.add(cond, "("+strings.Join(ors, " OR ")+")")
	}
	for _, c := range q.Where {
		col, err := t.column(c.Column)
		if err != nil {
			return "", nil, err
		}
		if c.Op == recordstore.OpContains {
			s, _ := c.Value.(string)
			w.add("instr(lower(" + col + "), " + w.arg(recordstore.FoldASCII(s)) + ") > 0")
			continue
		}
		switch c.Op {
		case recordstore.OpEq, recordstore.OpNe, recordstore.OpLt, recordstore.OpLe, recordstore.OpGt, recordstore.OpGe:
		default:
			return "", nil, recordstore.Invalidf("condition on %s: unknown operator %s", c.Column, recordstore.Quote(string(c.Op)))
		}
		op := string(c.Op)
		if c.Op == recordstore.OpNe {
			op = "<>" // and a null column stays out, as with every comparison
		}
		w.add(col + " " + op + " " + w.arg(recordstore.StoredValue(c.Value)))
	}
	order, err := t.orderAndCursor(w, q)
	if err != nil {
		return "", nil, err
	}
	limit := int64(-1)
	if q.Limit > 0 {
		limit = int64(q.Limit)
	}
	text := "SELECT " + seq + ", " + quoteList(columnNames(&t.kind)) + " FROM " + quote(t.name) +
		" WHERE " + strings.Join(w.conds, " AND ") + " ORDER BY " + order + " LIMIT " + w.arg(limit)
	return text, w.args, nil
}

// seqWindow returns the seqs a page of q may hold, lo < seq ≤ hi (hi < 0:
// no upper bound): q's window After < seq ≤ To, narrowed by the cursor
// when q is ordered by seq (ascending, the rows after it; descending, the
// rows before it).
func seqWindow(q *recordstore.RowQuery) (lo, hi int64) {
	lo, hi = q.After, -1
	if q.To > 0 {
		hi = q.To
	}
	if q.HasCursor && q.SortsBySeq() {
		if !q.Desc {
			lo = max(lo, q.CursorSeq)
		} else if c := max(q.CursorSeq-1, 0); hi < 0 || c < hi {
			hi = c
		}
	}
	return lo, hi
}

// orderAndCursor adds the cursor's condition to w and returns the ORDER BY
// of q. A cursor of a seq order is already in the seq window (seqWindow).
// SQLite sorts nulls first: ascending, a null cursor value is followed by
// the rest of the nulls and then every non-null value; descending, by the
// rest of the nulls only.
func (t *table) orderAndCursor(w *whereBuilder, q *recordstore.RowQuery) (string, error) {
	seq := t.layout.seq
	dir, cmpOp := " ASC", ">"
	if q.Desc {
		dir, cmpOp = " DESC", "<"
	}
	if q.SortsBySeq() {
		return seq + dir, nil
	}
	col, err := t.column(q.Sort)
	if err != nil {
		return "", err
	}
	if q.HasCursor {
		s := w.arg(q.CursorSeq)
		if q.CursorValue == nil {
			if q.Desc {
				w.add("(" + col + " IS NULL AND " + seq + " < " + s + ")")
			} else {
				w.add("((" + col + " IS NULL AND " + seq + " > " + s + ") OR " + col + " IS NOT NULL)")
			}
		} else {
			v := w.arg(recordstore.StoredValue(q.CursorValue))
			c := "(" + col + " " + cmpOp + " " + v + " OR (" + col + " = " + v + " AND " + seq + " " + cmpOp + " " + s + ")"
			if q.Desc {
				c += " OR " + col + " IS NULL"
			}
			w.add(c + ")")
		}
	}
	return col + dir + ", " + seq + dir, nil
}

// column returns the quoted name of a kind column (ErrInvalid when the
// kind has none of that name).
func (t *table) column(name string) (string, error) {
	if t.kind.ColumnIndex(name) < 0 {
		return "", recordstore.Invalidf("kind %s has no column %s", t.kind.Name, recordstore.Quote(name))
	}
	return quote(name), nil
}

// whereBuilder collects the conditions and numbered arguments of a query.
type whereBuilder struct {
	conds []string
	args  []any
}

// arg binds v and returns its parameter.
func (w *whereBuilder) arg(v any) string {
	w.args = append(w.args, v)
	return "?" + strconv.Itoa(len(w.args))
}

// add appends a condition ("" parts are skipped).
func (w *whereBuilder) add(conds ...string) {
	for _, c := range conds {
		if c != "" {
			w.conds = append(w.conds, c)
		}
	}
}
