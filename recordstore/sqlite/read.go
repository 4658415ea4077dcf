// Reads — Meta, Streams, Scan — on the query_only reader pool, so they
// never wait for the writer.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Meta describes a live stream (ErrNotFound when it does not exist, was
// deleted, or has expired).
func (b *Backend) Meta(ctx context.Context, stream string) (_ recordstore.Meta, err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.Meta{}, err
	}
	if err := b.enter(); err != nil {
		return recordstore.Meta{}, err
	}
	defer b.leave()
	s, found, err := loadStream(ctx, b.rs.getStream, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return recordstore.Meta{}, notFound("stream %s", stream)
	}
	return s.meta(), nil
}

// Streams lists live streams, of one kind when kind is not "", sorted by
// stream id. An undeclared kind is ErrNotFound.
func (b *Backend) Streams(ctx context.Context, kind string) (_ []recordstore.Meta, err error) {
	defer b.corrupted(&err)
	if kind != "" {
		if err := recordstore.ValidateKindName(kind); err != nil {
			return nil, err
		}
	}
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	if kind != "" && b.tables.get(kind) == nil {
		var one int
		err := b.r.QueryRowContext(ctx, `SELECT 1 FROM record_kinds WHERE name = ?1`, kind).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("kind %s is not declared", kind)
		}
		if err != nil {
			return nil, fmt.Errorf("list streams: %w", err)
		}
	}
	q := `SELECT no, id, kind, generation, high_seq, low_seq, total, sealed, deleted, created_at, updated_at, expires_at
		FROM record_streams WHERE deleted = 0 AND (expires_at IS NULL OR expires_at > ?1)`
	args := []any{recordstore.FormatDatetime(b.now())}
	if kind != "" {
		q += ` AND kind = ?2`
		args = append(args, kind)
	}
	rows, err := b.r.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	defer rows.Close()
	out := []recordstore.Meta{}
	for rows.Next() {
		var s streamRow
		if err := rows.Scan(&s.no, &s.id, &s.kind, &s.generation, &s.high, &s.low, &s.total, &s.sealed, &s.deleted,
			&s.created, &s.updated, &s.expires); err != nil {
			return nil, fmt.Errorf("list streams: %w", err)
		}
		out = append(out, s.meta())
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	return out, nil
}

// Scan returns the rows of stream's current generation with seq >
// opts.After, in seq order, at most opts.Limit of them (0: no cap). The
// stream row and the rows are read in one read transaction, so they agree.
func (b *Backend) Scan(ctx context.Context, stream string, opts recordstore.ScanOptions) (_ []recordstore.Record, err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return nil, err
	}
	if opts.Limit < 0 || opts.After < 0 {
		return nil, recordstore.Invalidf("scan %s: negative limit %d or after %d", stream, opts.Limit, opts.After)
	}
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	for attempt := 0; ; attempt++ {
		recs, miss, err := b.scanOnce(ctx, stream, opts)
		if miss == "" || attempt == 2 {
			if err != nil {
				return nil, fmt.Errorf("scan %s: %w", stream, err)
			}
			return recs, nil
		}
		// The stream's kind is not cached: load it with no connection held.
		if _, err := b.table(ctx, miss); err != nil {
			return nil, fmt.Errorf("scan %s: %w", stream, err)
		}
	}
}

// scanOnce reads the stream row and its rows in one read transaction. When
// the stream's kind is not in the table cache it returns the kind's name
// as miss: loading it needs connections this transaction must not wait on.
func (b *Backend) scanOnce(ctx context.Context, stream string, opts recordstore.ScanOptions) (recs []recordstore.Record, miss string, err error) {
	conn, err := b.r.Conn(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	tx, err := beginRead(ctx, conn)
	if err != nil {
		return nil, "", fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if rerr := tx.Rollback(); err == nil && rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = rerr
		}
	}()
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.rs.getStream), stream)
	if err != nil {
		return nil, "", err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return nil, "", notFound("stream %s", stream)
	}
	t := b.tables.get(s.kind)
	if t == nil {
		return nil, s.kind, notFound("kind %s of stream %s", s.kind, stream)
	}
	limit := int64(-1)
	if opts.Limit > 0 {
		limit = int64(opts.Limit)
	}
	hint := s.total
	if limit > 0 {
		hint = min(hint, limit)
	}
	if hint >= directScanMin {
		recs, ok, err := t.scanDirect(ctx, conn, s.no, opts.After, limit, hint)
		if ok || err != nil {
			return recs, "", err
		}
	}
	rows, err := tx.StmtContext(ctx, t.scan).QueryContext(ctx, s.no, opts.After, limit)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	recs, err = t.decodeRows(ctx, sqlRows(rows, len(t.kind.Columns)), hint)
	return recs, "", err
}

// directScanMin is the fewest rows a Scan expects for it to read them
// through the driver directly: below it, preparing the statement for the
// scan costs more than the rows save.
const directScanMin = 512

// scanDirect runs the table's scan (stream number no, seqs after after,
// at most limit rows, limit < 0: all) on the driver connection under conn,
// inside the read transaction running there, and decodes its rows (see
// driverRows): database/sql's handling of every row of a large scan cost
// about a tenth of its reading. ok is false, with nothing read, when the
// driver does not offer what this needs; the caller then reads through
// database/sql. The driver checks ctx while it steps; between chunks of
// rows, so does the loop.
func (t *table) scanDirect(ctx context.Context, conn *sql.Conn, no, after, limit, hint int64) (recs []recordstore.Record, ok bool, err error) {
	args := []driver.NamedValue{{Ordinal: 1, Value: no}, {Ordinal: 2, Value: after}, {Ordinal: 3, Value: limit}}
	ok, err = onDriver(ctx, conn, t.scanSQL, args, func(rows driver.Rows) (err error) {
		recs, err = t.decodeRows(ctx, driverRows(rows, len(t.kind.Columns)), hint)
		return err
	})
	return recs, ok, err
}

// onDriver runs the query text with args on the driver connection under
// conn (inside whatever transaction runs there) and hands its rows to
// read. ok is false, with nothing run, when the driver does not offer
// what this needs (a prepared statement that queries with a context); the
// caller then reads through database/sql.
func onDriver(ctx context.Context, conn *sql.Conn, text string, args []driver.NamedValue, read func(driver.Rows) error) (ok bool, err error) {
	err = conn.Raw(func(dc any) error {
		pc, isPC := dc.(driver.ConnPrepareContext)
		if !isPC {
			return nil
		}
		st, err := pc.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		defer st.Close()
		qc, isQC := st.(driver.StmtQueryContext)
		if !isQC {
			return nil
		}
		rows, err := qc.QueryContext(ctx, args)
		if err != nil {
			return err
		}
		defer rows.Close()
		ok = true
		return read(rows)
	})
	return ok, err
}

// beginRead starts a read transaction on db that the end of ctx does not
// roll back behind its user's back: database/sql would roll it back and
// close its statements on a goroutine of its own, and a read between two
// of them would fail with "sql: statement is closed" rather than with
// ctx's error. Its statements run with ctx and stop when it ends; the
// caller rolls the transaction back (deferred) as before.
func beginRead(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}) (*sql.Tx, error) {
	return db.BeginTx(context.WithoutCancel(ctx), &sql.TxOptions{ReadOnly: true})
}
