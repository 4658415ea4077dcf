// AppendBatch: applying batches exactly once, many in one transaction
// (group commit), each entry in its own savepoint, each batch with its
// ledger row.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// AppendBatch applies batches (see recordstore.BatchAppender) in one
// transaction:
//
//   - A batch whose id is in the ledger writes nothing and gets the
//     recorded result; a batch id repeated in the call gets the result of
//     its first occurrence.
//   - A batch with Failure is recorded as failed, and none of its entries
//     is applied.
//   - Otherwise every entry runs in order, in its own savepoint: one that
//     fails for a reason of its own (ErrInvalid, ErrNotFound — a
//     generation fence included —, ErrSealed, ErrSchemaConflict) is rolled
//     back and its result carries the error; the others commit. The
//     batch's outcome is committed.
//   - Each batch gets its ledger row, stamped with the epoch, in the same
//     transaction as its data.
//
// Before the transaction, each batch's own schemas are reconciled with the
// catalog: a kind the catalog lacks is declared, columns a schema adds are
// added; any other difference fails that kind's entries with
// ErrSchemaConflict. Rows are in the column order of the batch's schema of
// their kind (or of the catalog's kind when the batch has none). The rows'
// appended_at, which retention goes by, is the time of the transaction.
//
// On error (I/O, ctx, a closed or read-only backend, a newer epoch:
// ErrFenced) nothing of the batches and no ledger row was written; kinds
// and columns declared from their schemas stay declared. An I/O error stops
// the writer (ErrWriterFailed), as every write does.
func (b *Backend) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	for i := range batches {
		if batches[i].ID == "" {
			return nil, recordstore.Invalidf("append batch: batch %d has no id", i)
		}
	}
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	if b.readOnly {
		return nil, b.readOnlyErr("append batch")
	}
	if len(batches) == 0 {
		return []recordstore.BatchResult{}, nil
	}
	if err := b.lockWrite(ctx); err != nil {
		return nil, fmt.Errorf("append batch: %w", err)
	}
	defer b.unlockWrite()
	if err := b.ensureLedgerLocked(ctx); err != nil {
		return nil, fmt.Errorf("append batch: %w", err)
	}
	plans, err := b.planBatches(ctx, batches, true)
	if err != nil {
		return nil, fmt.Errorf("append batch: %w", err)
	}
	var (
		results []recordstore.BatchResult
		touched []string
	)
	apply := func() error {
		return b.inTxLocked(ctx, func(tx *sql.Tx, now time.Time) (err error) {
			results, touched, err = b.applyTx(ctx, tx, plans, now)
			return err
		})
	}
	err = apply()
	if errors.Is(err, errLedgerConflict) {
		// A producer mark was wrong (see producerMarks): nothing was
		// written; plan again, looking every batch up.
		b.log.Warn("a batch taken as new is in the ledger; applying the call again with ledger lookups", "error", err)
		b.marks = nil
		if plans, err = b.planBatches(ctx, batches, false); err == nil {
			err = apply()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("append batch: %w", err)
	}
	b.marks.raise(plans)
	b.notifier.Notify(touched...)
	return results, nil
}

// applyTx applies the planned batches inside tx and returns their results
// and the streams they changed. It first checks that no other process
// opened the file writable since this backend did (ErrFenced, which stops
// the writer).
func (b *Backend) applyTx(ctx context.Context, tx *sql.Tx, plans []batchPlan, now time.Time) ([]recordstore.BatchResult, []string, error) {
	if err := b.checkEpochTx(ctx, tx); err != nil {
		return nil, nil, err
	}
	results := make([]recordstore.BatchResult, len(plans))
	var (
		touched []string
		ledger  ledgerRows
	)
	cache := newStreamCache(b)
	for i := range plans {
		p := &plans[i]
		switch {
		case p.dupOf >= 0:
			results[i] = results[p.dupOf]
			continue
		case p.recorded != nil:
			results[i] = *p.recorded
			continue
		}
		if p.replaces {
			if _, err := tx.ExecContext(ctx, sqlLedgerForget, p.batch.ID); err != nil {
				return nil, nil, fmt.Errorf("forget the failure of retried batch %s: %w", p.batch.ID, err)
			}
		}
		res, err := b.applyBatchTx(ctx, tx, cache, p, now, &touched)
		if err != nil {
			return nil, nil, err
		}
		if err := ledger.add(p.batch, &res); err != nil {
			return nil, nil, err
		}
		results[i] = res
	}
	if err := cache.flushAll(ctx, tx, now); err != nil {
		return nil, nil, err
	}
	if err := ledger.putTx(ctx, tx, b.ledger); err != nil {
		return nil, nil, err
	}
	return results, touched, nil
}

// applyBatchTx applies one batch's entries (none for a failed batch) and
// returns its result; the streams its entries changed are added to touched.
func (b *Backend) applyBatchTx(ctx context.Context, tx *sql.Tx, cache *streamCache, p *batchPlan, now time.Time, touched *[]string) (res recordstore.BatchResult, err error) {
	res = recordstore.BatchResult{ID: p.batch.ID, Outcome: recordstore.OutcomeCommitted, Epoch: b.epoch.Load(),
		IngestedAt: now, Entries: make([]recordstore.EntryResult, 0, len(p.entries))}
	if p.batch.Failure != nil {
		res.Outcome, res.Error = recordstore.OutcomeFailed, p.batch.Failure
	}
	var undo *batchUndo
	if hasSource(p.batch) {
		t0 := len(*touched)
		defer func() {
			if res.Outcome == recordstore.OutcomeFailed {
				*touched = (*touched)[:t0]
			}
		}()
		if undo, err = beginBatchUndo(ctx, tx, cache, p); err != nil {
			return res, err
		}
	}
	for j := range p.entries {
		r, changed, err := b.applyEntryTx(ctx, tx, cache, &p.entries[j], now)
		var se *sourceError
		if errors.As(err, &se) && !fatal(ctx, err) {
			return undo.fail(ctx, tx, cache, res, se)
		}
		if err != nil {
			return res, fmt.Errorf("batch %s entry %d: %w", p.batch.ID, j, err)
		}
		res.Entries = append(res.Entries, r)
		if changed {
			*touched = append(*touched, r.Stream)
		}
	}
	return res, undo.release(ctx, tx)
}

// checkEpochTx fails with ErrFenced, and stops the writer, when the file's
// epoch is not the one this backend set.
func (b *Backend) checkEpochTx(ctx context.Context, tx *sql.Tx) error {
	var epoch int64
	if err := tx.StmtContext(ctx, b.ledger.epoch).QueryRowContext(ctx).Scan(&epoch); err != nil {
		return fmt.Errorf("read epoch: %w", err)
	}
	if mine := b.epoch.Load(); epoch != mine {
		b.failed = fmt.Errorf("%w: the file is at epoch %d, this writer opened it at %d", ErrFenced, epoch, mine)
		b.log.Error("writer fenced: another process opened the store writable", "epoch", epoch, "mine", mine)
		return b.failed
	}
	return nil
}

// applyEntryTx applies one planned entry in its own savepoint. An error
// that belongs to the entry rolls the savepoint (and the entry's stream in
// the cache) back and becomes the entry's result; a row source's bad data
// does too, and is also returned as a *sourceError (the caller fails the
// batch); any other error is returned (the caller rolls the whole
// transaction back). changed reports
// that the entry's stream changed.
func (b *Backend) applyEntryTx(ctx context.Context, tx *sql.Tx, cache *streamCache, p *entryPlan, now time.Time) (r recordstore.EntryResult, changed bool, err error) {
	r = recordstore.EntryResult{Op: p.e.Op, Stream: p.e.Stream}
	switch {
	case p.err != nil:
		r.Error = recordstore.AsBatchError(p.err)
		return r, false, nil
	case p.e.Op == recordstore.OpDeclare:
		r.Status = p.status
		return r, false, nil
	}
	if _, err := tx.StmtContext(ctx, b.ledger.savepoint).ExecContext(ctx); err != nil {
		return r, false, fmt.Errorf("savepoint: %w", err)
	}
	snap, cached := cache.snapshot(p.e.Stream)
	changed, err = b.entryTx(ctx, tx, cache, p, &r, now)
	if err != nil {
		if fatal(ctx, err) {
			return r, false, err
		}
		if _, rerr := tx.StmtContext(ctx, b.ledger.rollbackTo).ExecContext(ctx); rerr != nil {
			return r, false, fmt.Errorf("roll back to savepoint: %w", rerr)
		}
		cache.restore(p.e.Stream, snap, cached)
		r = recordstore.EntryResult{Op: p.e.Op, Stream: p.e.Stream, Error: recordstore.AsBatchError(err)}
		changed = false
		var se *sourceError
		if errors.As(err, &se) {
			// The batch fails as a whole; the caller rolls it back.
			err = se
		} else {
			err = nil
		}
	}
	if _, rerr := tx.StmtContext(ctx, b.ledger.release).ExecContext(ctx); rerr != nil {
		return r, false, fmt.Errorf("release savepoint: %w", rerr)
	}
	return r, changed, err
}

// entryTx is the body of one entry, filling r. Appends go through the
// stream cache; any other operation reads the stream from the file, so the
// stream's pending state is written first.
func (b *Backend) entryTx(ctx context.Context, tx *sql.Tx, cache *streamCache, p *entryPlan, r *recordstore.EntryResult, now time.Time) (bool, error) {
	e := p.e
	if e.Op != recordstore.OpAppend || e.Generation != 0 {
		if err := cache.flush(ctx, tx, e.Stream, now); err != nil {
			return false, err
		}
	}
	if e.Generation != 0 && e.Op != recordstore.OpReopen {
		if err := b.fenceTx(ctx, tx, e.Stream, e.Generation, now); err != nil {
			return false, err
		}
	}
	var (
		s       streamRow
		changed bool
		err     error
	)
	switch e.Op {
	case recordstore.OpAppend:
		return b.appendEntryTx(ctx, tx, cache, p, r, now)
	case recordstore.OpSeal:
		s, changed, err = b.sealTx(ctx, tx, e.Stream, now)
	case recordstore.OpReopen:
		s, changed, err = b.reopenTx(ctx, tx, e.Stream, e.Generation, now)
	case recordstore.OpExpire:
		s, changed, err = b.expireTx(ctx, tx, e.Stream, e.TTL, now)
	case recordstore.OpTrim:
		s, changed, err = b.trimTx(ctx, tx, e.Stream, e.Before, now)
	case recordstore.OpDelete:
		_, changed, err = b.deleteTx(ctx, tx, e.Stream, now)
		return changed, err
	default:
		return false, recordstore.Invalidf("unknown operation %s", recordstore.Quote(string(e.Op)))
	}
	if err != nil {
		return false, err
	}
	m := s.meta()
	r.Meta = &m
	return changed, nil
}

// appendEntryTx appends an entry's rows (none is fine: the stream is
// created) and seals the stream when the entry says so.
func (b *Backend) appendEntryTx(ctx context.Context, tx *sql.Tx, cache *streamCache, p *entryPlan, r *recordstore.EntryResult, now time.Time) (bool, error) {
	e := p.e
	var feed *rowFeed
	var err error
	if e.Source != nil {
		feed, err = p.t.feedSource(e.Source, p.remap)
	} else {
		feed, err = p.t.feedValues(e.Rows, p.remap)
	}
	if err != nil {
		return false, err
	}
	res, err := cache.appendTx(ctx, tx, p.t, e.Stream, feed, now)
	if err != nil {
		// Bad rows win over what the transaction ran into, unless that
		// fails the whole call.
		if serr := feed.settle(err); !fatal(ctx, err) {
			err = serr
		}
		return false, err
	}
	r.Append = &res
	if e.Seal {
		if err := cache.flush(ctx, tx, e.Stream, now); err != nil {
			return false, err
		}
		s, _, err := b.sealTx(ctx, tx, e.Stream, now)
		if err != nil {
			return false, err
		}
		m := s.meta()
		r.Meta = &m
	}
	return true, nil
}

// fenceTx refuses (ErrNotFound) an entry fenced to a generation that is
// not the stream's live one.
func (b *Backend) fenceTx(ctx context.Context, tx *sql.Tx, stream string, generation int64, now time.Time) error {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return err
	}
	if s.generation != generation {
		return notFound("stream %s: generation %d is not the current one (%d)", stream, generation, s.generation)
	}
	return nil
}
