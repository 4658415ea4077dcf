// Stream mutations other than append — seal, reopen, expire, trim, delete —
// each a thin public method around a body that runs inside a transaction
// (or, read-only, the batch entry submitted instead).

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Seal makes a stream refuse further appends (ErrSealed). Sealing a sealed
// stream changes nothing. ErrNotFound when the stream is not live.
func (b *Backend) Seal(ctx context.Context, stream string) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: stream}, func(tx *sql.Tx, now time.Time) (streamRow, bool, error) {
		return b.sealTx(ctx, tx, stream, now)
	})
}

// Reopen unseals a stream when generation is its current one (ErrNotFound
// otherwise, or when the stream is not live).
func (b *Backend) Reopen(ctx context.Context, stream string, generation int64) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: stream, Generation: generation}, func(tx *sql.Tx, now time.Time) (streamRow, bool, error) {
		return b.reopenTx(ctx, tx, stream, generation, now)
	})
}

// Expire makes a stream expire ttl from now (ttl > 0, else ErrInvalid). An
// expired stream reads as not found at once; the sweeper removes its rows.
func (b *Backend) Expire(ctx context.Context, stream string, ttl time.Duration) (recordstore.Meta, error) {
	if ttl <= 0 {
		return recordstore.Meta{}, recordstore.Invalidf("expire %s: ttl %v must be positive", stream, ttl)
	}
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: stream, TTL: ttl}, func(tx *sql.Tx, now time.Time) (streamRow, bool, error) {
		return b.expireTx(ctx, tx, stream, ttl, now)
	})
}

// Trim drops the rows of every append to stream made before the given time.
func (b *Backend) Trim(ctx context.Context, stream string, before time.Time) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: stream, Before: before}, func(tx *sql.Tx, now time.Time) (streamRow, bool, error) {
		return b.trimTx(ctx, tx, stream, before, now)
	})
}

// Delete removes a stream's rows and leaves a tombstone, so that its next
// append starts a higher generation at seq 1. ErrNotFound when the stream
// is not live.
func (b *Backend) Delete(ctx context.Context, stream string) error {
	_, err := b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: stream}, func(tx *sql.Tx, now time.Time) (streamRow, bool, error) {
		return b.deleteTx(ctx, tx, stream, now)
	})
	return err
}

// mutate validates the stream id and runs body in one write transaction;
// when body reports a change the stream's followers are notified. A
// read-only backend submits e instead (see Options.Submit).
func (b *Backend) mutate(ctx context.Context, e recordstore.BatchEntry, body func(*sql.Tx, time.Time) (streamRow, bool, error)) (recordstore.Meta, error) {
	stream := e.Stream
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.Meta{}, err
	}
	if err := b.enter(); err != nil {
		return recordstore.Meta{}, err
	}
	if b.readOnly {
		b.leave()
		return b.mutateReadOnly(ctx, e)
	}
	defer b.leave()
	var (
		s       streamRow
		changed bool
	)
	err := b.writeTx(ctx, func(tx *sql.Tx, now time.Time) (err error) {
		s, changed, err = body(tx, now)
		return err
	})
	if err != nil {
		return recordstore.Meta{}, fmt.Errorf("%s %s: %w", e.Op, stream, err)
	}
	if changed {
		b.notifier.Notify(stream)
	}
	return s.meta(), nil
}

// liveStreamTx loads a stream that must be live at now (ErrNotFound).
func (b *Backend) liveStreamTx(ctx context.Context, tx *sql.Tx, stream string, now time.Time) (streamRow, error) {
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.ws.getStream), stream)
	if err != nil {
		return s, err
	}
	if !found || !s.live(recordstore.FormatDatetime(now)) {
		return s, notFound("stream %s", stream)
	}
	return s, nil
}

func (b *Backend) sealTx(ctx context.Context, tx *sql.Tx, stream string, now time.Time) (streamRow, bool, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil || s.sealed {
		return s, false, err
	}
	s.sealed = true
	s.updated = recordstore.FormatDatetime(now)
	return s, true, s.put(ctx, tx, b.ws)
}

func (b *Backend) reopenTx(ctx context.Context, tx *sql.Tx, stream string, generation int64, now time.Time) (streamRow, bool, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return s, false, err
	}
	if s.generation != generation {
		return s, false, notFound("stream %s: generation %d is not the current one (%d)", stream, generation, s.generation)
	}
	if !s.sealed {
		return s, false, nil
	}
	s.sealed = false
	s.updated = recordstore.FormatDatetime(now)
	return s, true, s.put(ctx, tx, b.ws)
}

func (b *Backend) expireTx(ctx context.Context, tx *sql.Tx, stream string, ttl time.Duration, now time.Time) (streamRow, bool, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return s, false, err
	}
	s.expires = sql.NullString{String: recordstore.FormatDatetime(now.Add(ttl)), Valid: true}
	s.updated = recordstore.FormatDatetime(now)
	return s, true, s.put(ctx, tx, b.ws)
}

func (b *Backend) trimTx(ctx context.Context, tx *sql.Tx, stream string, before, now time.Time) (streamRow, bool, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return s, false, err
	}
	t := b.tables.get(s.kind)
	if t == nil {
		return s, false, corrupt("stream %s has kind %s, which is not loaded", stream, s.kind)
	}
	if t.layout.bound && !t.layout.seqStored {
		// Its rows' seqs are their key values, not the seqs of the appends.
		return s, false, recordstore.Invalidf("stream %s: kind %s keeps its key in table %s's INTEGER PRIMARY KEY: it cannot be trimmed by time",
			stream, s.kind, t.name)
	}
	trimmed, err := b.trimAppendsTx(ctx, tx, t, &s, recordstore.FormatDatetime(before))
	if err != nil || !trimmed {
		return s, false, err
	}
	s.updated = recordstore.FormatDatetime(now)
	return s, true, s.putCounters(ctx, tx, b.ws)
}

func (b *Backend) deleteTx(ctx context.Context, tx *sql.Tx, stream string, now time.Time) (streamRow, bool, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return s, false, err
	}
	if err := b.purgeTx(ctx, tx, &s); err != nil {
		return s, false, err
	}
	s.updated = recordstore.FormatDatetime(now)
	return s, true, s.put(ctx, tx, b.ws)
}

// purgeTx deletes every row and append of the stream's current generation
// and turns s into a tombstone (not written; the caller writes s or
// replaces it with the next generation).
func (b *Backend) purgeTx(ctx context.Context, tx *sql.Tx, s *streamRow) error {
	purge, err := b.purgeSQLTx(ctx, tx, s.kind)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, purge, s.no); err != nil {
		return fmt.Errorf("delete rows of %s: %w", s.id, err)
	}
	if _, err := tx.StmtContext(ctx, b.ws.deleteAppends).ExecContext(ctx, s.no); err != nil {
		return fmt.Errorf("delete appends of %s: %w", s.id, err)
	}
	s.deleted, s.sealed = true, false
	s.total, s.low = 0, s.high+1
	s.expires = sql.NullString{}
	return nil
}

// purgeSQLTx returns the statement deleting every row of a stream (?1) of
// kind: all the rows of a bound kind's table (it holds one stream), the
// stream's rows of any other kind's table.
func (b *Backend) purgeSQLTx(ctx context.Context, tx *sql.Tx, kind string) (string, error) {
	if t := b.tables.get(kind); t != nil {
		return t.purge, nil
	}
	var table, schema string
	err := tx.QueryRowContext(ctx, `SELECT table_name, schema FROM record_kinds WHERE name = ?1`, kind).Scan(&table, &schema)
	if errors.Is(err, sql.ErrNoRows) {
		return "", corrupt("kind %s of a stream is not in the catalog", kind)
	}
	if err != nil {
		return "", fmt.Errorf("read the table of kind %s: %w", kind, err)
	}
	k, err := parseSchema(kind, schema)
	if err != nil {
		return "", err
	}
	if k.Table != nil {
		return "DELETE FROM " + quote(table) + " WHERE ?1 IS NOT NULL", nil
	}
	return "DELETE FROM " + quote(table) + " WHERE " + colStream + " = ?1", nil
}
