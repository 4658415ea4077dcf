// StreamRows: QueryRows handing each row to a function as it is read, in
// column order, instead of returning records. A large export reads its
// pages this way: no Row map per row, and the statement is stepped through
// the driver directly, without database/sql's work on every row.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// StreamRows runs q on stream's current generation as QueryRows does, in
// one read transaction, and hands what it reads to two functions instead
// of returning it: start once, with the stream's Meta, before any row
// (an error from start ends the read, returned as it is, before any row
// is read) and the kind's columns, in the order row's values take (not to
// be modified); then row for each row q selects, in q's order, with its seq
// and its values in the kind's column order (in the form QueryRows' records
// hold them: a null column is nil). vals is reused: row must not keep it
// after it returns (the values in it may be kept). Past the first rows,
// row runs on a goroutine of its own while the next rows are read, one
// call at a time and in order; its first error ends the read and is
// returned as it is. The kind's columns are Backend.Kind's. It only reads:
// on any failure the store is as it was.
func (b *Backend) StreamRows(ctx context.Context, stream string, q recordstore.RowQuery, start func(recordstore.Meta, *recordstore.Kind) error, row func(seq int64, vals []any) error) (err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if q.Limit < 0 || q.After < 0 || q.To < 0 {
		return recordstore.Invalidf("query %s: negative limit, after or to", stream)
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	for attempt := 0; ; attempt++ {
		var cberr callerError
		miss, err := b.streamOnce(ctx, stream, &q, &cberr, start, row)
		if cberr.err != nil {
			return cberr.err
		}
		if miss == "" || attempt == 2 {
			if err != nil {
				return fmt.Errorf("query %s: %w", stream, err)
			}
			return nil
		}
		if _, err := b.table(ctx, miss); err != nil {
			return fmt.Errorf("query %s: %w", stream, err)
		}
	}
}

// callerError holds the first error of a StreamRows caller's function, so
// that it is returned as it is, not as a failure of the read.
type callerError struct{ err error }

// streamOnce is StreamRows in one read transaction; miss names the
// stream's kind when its table is not cached (see scanOnce). An error of
// start or row is stored in cberr.
func (b *Backend) streamOnce(ctx context.Context, stream string, q *recordstore.RowQuery, cberr *callerError,
	start func(recordstore.Meta, *recordstore.Kind) error, row func(seq int64, vals []any) error) (miss string, err error) {
	conn, err := b.r.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	tx, err := beginRead(ctx, conn)
	if err != nil {
		return "", fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if rerr := tx.Rollback(); err == nil && rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = rerr
		}
	}()
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.rs.getStream), stream)
	if err != nil {
		return "", err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return "", notFound("stream %s", stream)
	}
	t := b.tables.get(s.kind)
	if t == nil {
		return s.kind, notFound("kind %s of stream %s", s.kind, stream)
	}
	narrow := func(w *whereBuilder, lo, hi int64) (string, error) {
		return t.searchCond(ctx, tx, w, q, s.no, s.high, lo, hi)
	}
	text, args, err := t.querySQL(s.no, q, narrow)
	if err != nil {
		return "", err
	}
	if err := start(s.meta(), &t.kind); err != nil {
		cberr.err = err
		return "", nil
	}
	call := func(seq int64, vals []any) error {
		if err := row(seq, vals); err != nil {
			cberr.err = err
			return errCallerStopped
		}
		return nil
	}
	ok, err := t.streamDirect(ctx, conn, text, args, call)
	if ok || err != nil {
		return "", ignoreCallerStop(err)
	}
	rows, err := tx.QueryContext(ctx, text, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	return "", ignoreCallerStop(t.streamDecoded(ctx, sqlRows(rows, len(t.kind.Columns)), call))
}

// errCallerStopped ends a read whose caller's function failed (its error
// is in the callerError).
var errCallerStopped = errors.New("stopped by the caller")

func ignoreCallerStop(err error) error {
	if errors.Is(err, errCallerStopped) {
		return nil
	}
	return err
}

// streamDirect runs text with args on the driver connection under conn,
// inside the read transaction running there (see scanDirect), and hands
// its decoded rows to row. ok is false, with nothing read, when the driver
// does not offer what this needs or an argument is not a value the driver
// takes as it is; the caller then reads through database/sql.
func (t *table) streamDirect(ctx context.Context, conn *sql.Conn, text string, args []any, row func(int64, []any) error) (ok bool, err error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		if !driver.IsValue(a) {
			return false, nil
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return onDriver(ctx, conn, text, named, func(rows driver.Rows) error {
		return t.streamDecoded(ctx, driverRows(rows, len(t.kind.Columns)), row)
	})
}

// streamDecoded reads every row step yields and hands it, decoded, to
// row, chunk by chunk (see readChunks: past the first chunk on a second
// goroutine while the next is read); the first error of row stops the
// reading. ctx is checked between chunks.
func (t *table) streamDecoded(ctx context.Context, step rowStep, row func(int64, []any) error) error {
	dec := make([]any, len(t.kind.Columns))
	width := len(dec)
	return readChunks(ctx, width, step, func(c *rawChunk) error {
		for r := 0; r < c.n; r++ {
			raw := c.vals[r*width : (r+1)*width]
			for i, col := range t.kind.Columns {
				dec[i] = decodeValue(col.Type, raw[i])
			}
			if err := row(c.seqs[r], dec); err != nil {
				return err
			}
		}
		return nil
	})
}
