// Append: normalizing rows outside the write lock, then one transaction
// that opens the stream's generation, applies row retention, inserts the
// rows under the kind's conflict policy and records the append.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Append appends rows of kind to stream (see recordstore.Backend). Rows are
// normalized before the write lock is taken, or for a large append in the
// background while earlier rows are inserted; the append is one
// transaction, so on error (bad input included) nothing of it is stored.
// The rows' appended_at, which Trim and row retention go by, is the time of
// the transaction. A read-only backend checks the append locally and
// submits it (see Options.Submit).
func (b *Backend) Append(ctx context.Context, stream, kind string, rows []recordstore.Row) (recordstore.AppendResult, error) {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.AppendResult{}, err
	}
	if err := recordstore.ValidateKindName(kind); err != nil {
		return recordstore.AppendResult{}, err
	}
	if len(rows) == 0 {
		return recordstore.AppendResult{}, recordstore.Invalidf("append to %s: no rows", stream)
	}
	if err := b.enter(); err != nil {
		return recordstore.AppendResult{}, err
	}
	if b.readOnly {
		b.leave()
		return b.appendReadOnly(ctx, stream, kind, rows)
	}
	defer b.leave()
	t, err := b.table(ctx, kind)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	feed, err := t.feedRows(rows)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	var res recordstore.AppendResult
	err = b.writeTx(ctx, func(tx *sql.Tx, now time.Time) error {
		res, err = b.appendTx(ctx, tx, t, stream, feed, now)
		return err
	})
	if err != nil {
		err = feed.settle(err)
		return recordstore.AppendResult{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	b.notifier.Notify(stream)
	return res, nil
}

// normalize turns rows into stored values and refuses (ErrInvalid) a row
// that does not fit the kind or a key repeated among rows.
func (t *table) normalize(rows []recordstore.Row) ([]recordstore.Values, error) {
	f, err := t.feedRows(rows)
	if err == nil {
		err = f.wait(f.len())
	}
	if err != nil {
		return nil, err
	}
	return f.all(), nil
}

// newKeySet returns the key set of one append of t's rows (nil for a kind
// without a key): its keys past about 1 MiB go to a scratch file in the
// system's temporary folder (recordstore.KeySet), so that its memory does
// not grow with the rows.
func (t *table) newKeySet() *recordstore.KeySet {
	return recordstore.NewKeySet(&t.kind, "")
}

// appendTx is the body of an append inside tx. It refuses a stream of
// another kind (ErrSchemaConflict) or a sealed one (ErrSealed); a deleted
// or expired stream gets its next generation. On error the caller rolls
// tx back.
func (b *Backend) appendTx(ctx context.Context, tx *sql.Tx, t *table, stream string, feed *rowFeed, now time.Time) (recordstore.AppendResult, error) {
	res, _, err := b.appendStreamTx(ctx, tx, t, stream, feed, now)
	return res, err
}

// appendStreamTx is appendTx, also returning the stream's row as written.
func (b *Backend) appendStreamTx(ctx context.Context, tx *sql.Tx, t *table, stream string, feed *rowFeed, now time.Time) (recordstore.AppendResult, streamRow, error) {
	s, fresh, err := b.openGenerationTx(ctx, tx, t, stream, now)
	if err != nil {
		return recordstore.AppendResult{}, s, err
	}
	changed := fresh
	if r := t.kind.Retention; r != nil && r.Mode == recordstore.RetainRows && !fresh {
		cutoff := recordstore.FormatDatetime(now.Add(-time.Duration(r.TTL)))
		trimmed, err := b.trimAppendsTx(ctx, tx, t, &s, cutoff)
		if err != nil {
			return recordstore.AppendResult{}, s, err
		}
		changed = changed || trimmed
	}
	res := recordstore.AppendResult{Stream: stream, Kind: t.kind.Name, From: s.high + 1}
	if err := t.insertRows(ctx, tx, b.txConn, &s, feed, &res); err != nil {
		return recordstore.AppendResult{}, s, err
	}
	res.To = s.high + res.Appended
	if res.Appended > 0 {
		if err := b.recordAppend(ctx, tx, t, &s, &res, now); err != nil {
			return recordstore.AppendResult{}, s, err
		}
		changed = true
	}
	if !changed {
		return res, s, nil
	}
	s.updated = recordstore.FormatDatetime(now)
	if fresh {
		return res, s, s.put(ctx, tx, b.ws)
	}
	return res, s, s.putCounters(ctx, tx, b.ws)
}

// openGenerationTx loads the stream for an append, starting its first or
// next generation when it does not exist, was deleted or has expired (the
// rows of an expired generation are purged first). fresh reports a new
// generation: the caller writes its whole row at the end (a stream seen
// for the first time is inserted here already, to get its number).
func (b *Backend) openGenerationTx(ctx context.Context, tx *sql.Tx, t *table, stream string, now time.Time) (s streamRow, fresh bool, err error) {
	s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.ws.getStream), stream)
	if err != nil {
		return s, false, err
	}
	switch {
	case !found:
		// Rows refer to the stream by its number: create the row first.
		s = newGeneration(0, stream, &t.kind, 1, now)
		if t.layout.bound {
			if err := b.bindStreamTx(ctx, tx, t, &s); err != nil {
				return s, false, err
			}
		}
		return s, true, s.put(ctx, tx, b.ws)
	case !s.live(recordstore.FormatDatetime(now)):
		if !s.deleted {
			if err := b.purgeTx(ctx, tx, &s); err != nil {
				return s, false, err
			}
		}
		s = newGeneration(s.no, stream, &t.kind, s.generation+1, now)
		if t.layout.bound {
			return s, true, b.bindStreamTx(ctx, tx, t, &s)
		}
		return s, true, nil
	case s.kind != t.kind.Name:
		return s, false, schemaConflict("stream %s has kind %s, not %s", stream, s.kind, t.kind.Name)
	case s.sealed:
		return s, false, sealed(stream)
	}
	return s, false, nil
}

// recordAppend advances the stream past the appended window and records
// the window in record_appends.
func (b *Backend) recordAppend(ctx context.Context, tx *sql.Tx, t *table, s *streamRow, res *recordstore.AppendResult, now time.Time) error {
	if err := b.insertAppendTx(ctx, tx, s.no, now, res.From, res.To, s.generation); err != nil {
		return err
	}
	return t.advance(ctx, tx, s, res)
}

// insertAppendTx records that an append wrote seqs from..to of a stream's
// generation at now.
func (b *Backend) insertAppendTx(ctx context.Context, tx *sql.Tx, stream int64, now time.Time, from, to, generation int64) error {
	_, err := tx.StmtContext(ctx, b.ws.insertAppend).ExecContext(ctx, stream, recordstore.FormatDatetime(now), from, to, generation)
	if err != nil {
		return fmt.Errorf("record append: %w", err)
	}
	return nil
}

// advance moves the stream past the appended window: its high seq, total
// and, when rows were replaced, its low seq.
func (t *table) advance(ctx context.Context, tx *sql.Tx, s *streamRow, res *recordstore.AppendResult) error {
	s.high = res.To
	s.total += res.Appended - res.Replaced
	if res.Replaced > 0 {
		return t.lowSeqTx(ctx, tx, s)
	}
	return nil
}
