// The retention sweeper: it removes expired streams (leaving tombstones)
// and trims the appends of row-retention kinds older than their ttl.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// sweepChunk is how many streams one sweep transaction handles, so that
// appends are not held up behind a long sweep.
const sweepChunk = 64

// Sweep runs one retention pass now: expired streams are removed and the
// appends of row-retention kinds older than their ttl are trimmed. Each
// chunk of streams is its own transaction; on error the chunks before it
// stay committed and the failing one is rolled back. A read-only backend
// refuses with ErrReadOnly: retention is the owner's job.
func (b *Backend) Sweep(ctx context.Context) (err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	if b.readOnly {
		return b.readOnlyErr("sweep")
	}
	now := b.now()
	if err := b.sweepExpired(ctx, now); err != nil {
		return fmt.Errorf("sweep expired streams: %w", err)
	}
	for _, t := range b.tables.rowRetention() {
		if err := b.sweepRows(ctx, t, now); err != nil {
			return fmt.Errorf("sweep rows of kind %s: %w", t.kind.Name, err)
		}
	}
	return nil
}

// sweepLoop runs Sweep every interval until Close.
func (b *Backend) sweepLoop(every time.Duration) {
	defer b.wg.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
		start := time.Now()
		err := b.Sweep(b.ctx)
		if b.ctx.Err() != nil {
			return // Close cut the run short: not a run to report
		}
		if b.opts.Swept != nil {
			b.opts.Swept(time.Since(start), err)
		}
		if err != nil && b.ctx.Err() == nil && !errors.Is(err, recordstore.ErrClosed) {
			b.log.Warn("sweep failed", "err", err)
		}
	}
}

func (b *Backend) sweepExpired(ctx context.Context, now time.Time) error {
	ns := recordstore.FormatDatetime(now)
	ids, err := b.readIDs(ctx, `SELECT id FROM record_streams
		WHERE expires_at IS NOT NULL AND deleted = 0 AND expires_at <= ?1 ORDER BY id`, ns)
	if err != nil {
		return err
	}
	return b.inChunks(ctx, ids, func(tx *sql.Tx, id string) (bool, error) {
		s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.ws.getStream), id)
		if err != nil || !found || s.deleted || s.live(ns) {
			return false, err // changed since it was listed
		}
		if err := b.purgeTx(ctx, tx, &s); err != nil {
			return false, err
		}
		s.updated = ns
		b.log.Debug("swept expired stream", "stream", id, "generation", s.generation)
		return true, s.put(ctx, tx, b.ws)
	})
}

func (b *Backend) sweepRows(ctx context.Context, t *table, now time.Time) error {
	ns := recordstore.FormatDatetime(now)
	cutoff := recordstore.FormatDatetime(now.Add(-time.Duration(t.kind.Retention.TTL)))
	ids, err := b.readIDs(ctx, `SELECT s.id FROM record_streams s
		WHERE s.kind = ?1 AND s.deleted = 0 AND EXISTS (
			SELECT 1 FROM record_appends a WHERE a.stream = s.no AND a.appended_at < ?2)
		ORDER BY s.id`, t.kind.Name, cutoff)
	if err != nil {
		return err
	}
	return b.inChunks(ctx, ids, func(tx *sql.Tx, id string) (bool, error) {
		s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.ws.getStream), id)
		if err != nil || !found || !s.live(ns) || s.kind != t.kind.Name {
			return false, err
		}
		trimmed, err := b.trimAppendsTx(ctx, tx, t, &s, cutoff)
		if err != nil || !trimmed {
			return false, err
		}
		s.updated = ns
		return true, s.putCounters(ctx, tx, b.ws)
	})
}

// readIDs runs a query returning stream ids on the reader pool.
func (b *Backend) readIDs(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := b.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// inChunks applies fn to ids, sweepChunk of them per write transaction,
// and notifies the followers of the streams fn changed.
func (b *Backend) inChunks(ctx context.Context, ids []string, fn func(*sql.Tx, string) (bool, error)) error {
	for len(ids) > 0 {
		n := min(len(ids), sweepChunk)
		chunk := ids[:n]
		ids = ids[n:]
		var changed []string
		err := b.writeTx(ctx, func(tx *sql.Tx, _ time.Time) error {
			changed = changed[:0]
			for _, id := range chunk {
				ok, err := fn(tx, id)
				if err != nil {
					return err
				}
				if ok {
					changed = append(changed, id)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		b.notifier.Notify(changed...)
	}
	return nil
}
