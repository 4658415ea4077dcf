// Views: named SQL over a stream window, compiled on the query_only reader
// pool inside a subquery, so that only a single SELECT is taken.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

var _ recordstore.ViewRunner = (*Backend)(nil)

// viewSQL wraps a view's text: the "rows" CTE over table t binds the stream
// number (?1) and the seq window (?2 < seq ≤ ?3), and the view is a
// subquery, so that anything but one SELECT (a second statement, a write,
// a PRAGMA) is a syntax error before it could run; the reader pool is
// query_only besides.
func (t *table) viewSQL(view string) string {
	cols := quoteList(columnNames(&t.kind))
	return "WITH rows AS (SELECT " + t.layout.seq + " AS _seq, " + cols + " FROM " + quote(t.name) +
		" WHERE " + t.layout.streamCond() + " AND " + t.layout.seq + " > ?2 AND " + t.layout.seq + " <= ?3)" +
		" SELECT * FROM (\n" + view + "\n) LIMIT ?4"
}

// CheckView compiles sql as a view of kind, runs it over an empty window,
// and returns its result columns. Text that is not one SELECT, or does
// not compile, is ErrInvalid; an undeclared kind ErrNotFound.
func (b *Backend) CheckView(ctx context.Context, kind, text string) (_ []string, err error) {
	defer b.corrupted(&err)
	if strings.TrimSpace(text) == "" {
		return nil, recordstore.Invalidf("view of kind %s: no SQL", kind)
	}
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	t, err := b.table(ctx, kind)
	if err != nil {
		return nil, err
	}
	rows, err := b.r.QueryContext(ctx, t.viewSQL(text), int64(-1), int64(0), int64(0), int64(0))
	if err != nil {
		return nil, recordstore.Invalidf("view of kind %s does not compile as one SELECT over rows: %v", kind, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("view of kind %s: %w", kind, err)
	}
	return cols, rows.Err()
}

// RunView runs a view over stream's window, calling fn with each result
// row (at most limit; 0: all). The stream and the rows are read in one
// read transaction.
func (b *Backend) RunView(ctx context.Context, kind, text, stream string, after, to int64, limit int, fn func([]any) error) (err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if after < 0 || to < 0 || limit < 0 {
		return recordstore.Invalidf("view over %s: negative after, to or limit", stream)
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	t, err := b.table(ctx, kind)
	if err != nil {
		return err
	}
	tx, err := b.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("view over %s: begin: %w", stream, err)
	}
	defer func() {
		if rerr := tx.Rollback(); err == nil && rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = rerr
		}
	}()
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.rs.getStream), stream)
	if err != nil {
		return err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return notFound("stream %s", stream)
	}
	if s.kind != kind {
		return recordstore.Invalidf("stream %s is of kind %s; the view reads kind %s", stream, s.kind, kind)
	}
	if to == 0 {
		to = math.MaxInt64
	}
	lim := int64(-1)
	if limit > 0 {
		lim = int64(limit)
	}
	rows, err := tx.QueryContext(ctx, t.viewSQL(text), s.no, after, to, lim)
	if err != nil {
		return fmt.Errorf("view over %s: %w", stream, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("view over %s: %w", stream, err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("view over %s: %w", stream, err)
	}
	return nil
}
