// Views: named SQL over a stream window. A view's text must be exactly one
// read-only SELECT (checkStatement) and runs on a query_only reader
// connection under an authorizer that allows reading only (viewcheck.go).

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
// subquery. Text can close the subquery early, so the wrapped statement is
// checked whole (compileView) before it runs.
func (t *table) viewSQL(view string) string {
	cols := quoteList(columnNames(&t.kind))
	return "WITH rows AS (SELECT " + t.layout.seq + " AS _seq, " + cols + " FROM " + quote(t.name) +
		" WHERE " + t.layout.streamCond() + " AND " + t.layout.seq + " > ?2 AND " + t.layout.seq + " <= ?3)" +
		" SELECT * FROM (\n" + view + "\n) LIMIT ?4"
}

// CheckView compiles sql as a view of kind, runs it over an empty window,
// and returns its result columns. Text that is not exactly one read-only
// SELECT, or does not compile, is ErrInvalid; an undeclared kind
// ErrNotFound. Nothing of a refused text runs, and nothing is written.
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
	q, err := b.compileView(kind, t, text)
	if err != nil {
		return nil, err
	}
	var cols []string
	err = b.withViewConn(ctx, func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, q, int64(-1), int64(0), int64(0), int64(0))
		if err != nil {
			return viewError("view of kind "+kind, err)
		}
		defer rows.Close()
		if cols, err = rows.Columns(); err != nil {
			return fmt.Errorf("view of kind %s: %w", kind, err)
		}
		return rows.Err()
	})
	return cols, err
}

// compileView returns the statement of view text over table t, once
// SQLite found it to be exactly one read-only statement (checkStatement):
// else ErrInvalid naming kind.
func (b *Backend) compileView(kind string, t *table, text string) (string, error) {
	q := t.viewSQL(text)
	if checkedViews.has(q) {
		return q, nil
	}
	uri := fileURI(b.live, "mode=ro")
	if b.immutable {
		uri = fileURI(b.live, "immutable=1")
	}
	if err := checkStatement(uri, b.opts.BusyTimeout, q); err != nil {
		return "", viewError("view of kind "+kind, err)
	}
	checkedViews.add(q)
	return q, nil
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
	q, err := b.compileView(kind, t, text)
	if err != nil {
		return err
	}
	if to == 0 {
		to = math.MaxInt64
	}
	lim := int64(-1)
	if limit > 0 {
		lim = int64(limit)
	}
	return b.withViewConn(ctx, func(c *sql.Conn) error {
		return b.runView(ctx, c, kind, q, stream, after, to, lim, fn)
	})
}

// runView runs the checked statement q of a view of kind on c, in one
// read transaction with the read of stream's row.
func (b *Backend) runView(ctx context.Context, c *sql.Conn, kind, q, stream string, after, to, lim int64, fn func([]any) error) (err error) {
	tx, err := beginRead(ctx, c)
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
	rows, err := tx.QueryContext(ctx, q, s.no, after, to, lim)
	if err != nil {
		return viewError("view of kind "+kind+" over "+stream, err)
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
