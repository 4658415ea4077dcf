// Reads — Meta, Streams, Scan — on the query_only reader pool, so they
// never wait for the writer.

package sqlite

import (
	"context"
	"database/sql"
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
	tx, err := b.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
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
	rows, err := tx.StmtContext(ctx, t.scan).QueryContext(ctx, s.no, opts.After, limit)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	hint := s.total
	if limit > 0 {
		hint = min(hint, limit)
	}
	recs, err = t.decodeRows(rows, hint)
	return recs, "", err
}
