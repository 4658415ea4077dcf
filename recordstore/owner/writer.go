// The role-aware bulk Writer: spool.Writer's batching, delivered the way
// this process can write — applied directly while it owns the store,
// published into the spool otherwise.

package owner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Writer is the bulk writer of a Store. It buffers the appends and stream
// operations of one producer and cuts them into batches as spool.Writer
// does (50,000 rows or 64 MiB by default; each Append stays in one batch,
// so it is applied atomically). Each batch is delivered the way this
// process can write at that moment: while it is the owner, applied
// directly with the backend's AppendBatch; otherwise published into the
// spool, the owner poked. Either way a batch is applied exactly once, by
// its id, and a producer's batches in order: after a promotion the batches
// it spooled before are awaited before the next one is applied directly.
//
// Flush delivers what is buffered and returns the outcome of every batch
// delivered since the previous Flush. Writes buffered but not delivered
// when the process dies are lost; delivered ones are durable (in the
// store, or in the spool until the owner applies them).
//
// A Writer is safe for concurrent use. It is its own producer (a spool
// identity of its own, unless WriterOptions.Identity names one), so its
// batches are ordered among themselves, not with the Store's own writes.
type Writer[T Target] struct {
	s *Store[T]
	w *spool.Writer

	awaitMu sync.Mutex // one awaitSpooled at a time, so that each outcome is kept once
	mu      struct {
		sync.Mutex
		spooled []spooledBatch            // published, outcome not read yet, oldest first
		results []recordstore.BatchResult // outcomes not returned by Flush yet
	}
}

// spooledBatch is a batch a Writer published and has no outcome of yet.
type spooledBatch struct {
	id   string
	rows int64
}

// NewWriter returns a Writer of this store. opts.Identity nil means a new
// identity, with the store's build; opts.Limits zero means the spool's
// Limits, in either role, so that an append the spool could not carry is
// refused by the owner too; the other options are spool.Writer's.
func (s *Store[T]) NewWriter(opts spool.WriterOptions) *Writer[T] {
	if opts.Identity == nil {
		opts.Identity = spool.NewIdentity(s.opts.Build)
	}
	if opts.Limits == (spool.Limits{}) {
		opts.Limits = s.spool.Limits() // in either role: see spool.WriterOptions.Limits
	}
	wr := &Writer[T]{s: s}
	wr.w = spool.NewWriter(spool.SinkFunc(wr.deliver), opts)
	return wr
}

// Append buffers rows of kind for stream; see spool.Writer.Append. Rows
// that do not fit the kind are refused here, and nothing is buffered. A
// batch that fills up is delivered at once; its outcome comes with the
// next Flush.
func (wr *Writer[T]) Append(ctx context.Context, stream string, kind *recordstore.Kind, rows []recordstore.Row) error {
	return wr.w.Append(ctx, stream, kind, rows)
}

// Seal buffers the sealing of stream, after what was buffered before it.
func (wr *Writer[T]) Seal(ctx context.Context, stream string) error { return wr.w.Seal(ctx, stream) }

// Reopen buffers the reopening of stream at generation.
func (wr *Writer[T]) Reopen(ctx context.Context, stream string, generation int64) error {
	return wr.w.Reopen(ctx, stream, generation)
}

// Expire buffers setting stream to expire ttl after it is applied.
func (wr *Writer[T]) Expire(ctx context.Context, stream string, ttl time.Duration) error {
	return wr.w.Expire(ctx, stream, ttl)
}

// Trim buffers dropping the rows of stream appended before before.
func (wr *Writer[T]) Trim(ctx context.Context, stream string, before time.Time) error {
	return wr.w.Trim(ctx, stream, before)
}

// Delete buffers the deletion of stream.
func (wr *Writer[T]) Delete(ctx context.Context, stream string) error {
	return wr.w.Delete(ctx, stream)
}

// Pending returns the rows and entries buffered, not yet delivered.
func (wr *Writer[T]) Pending() (rows int64, entries int) { return wr.w.Pending() }

// Unanswered returns how many batches this Writer published into the spool
// whose outcome it has not read yet, and their rows: after a Flush that
// ended with a *PendingError, the rows that are durable in the spool and
// will be applied by the owner without this process.
func (wr *Writer[T]) Unanswered() (batches int, rows int64) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	for _, b := range wr.mu.spooled {
		rows += b.rows
	}
	return len(wr.mu.spooled), rows
}

// Kept returns the outcomes read but not returned by a Flush yet: after a
// Flush that failed, the batches known to be applied (or refused) before
// the one it stopped at. The next Flush still returns them.
func (wr *Writer[T]) Kept() []recordstore.BatchResult {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return slices.Clone(wr.mu.results)
}

// Flush delivers what is buffered, waits for the outcome of every batch
// delivered since the previous Flush, and returns those outcomes in
// delivery order. The error joins the batches' own errors — a failed
// batch, or an entry refused (a sealed stream: errors.Is ErrSealed) — each
// naming its batch; the other entries of such a batch were applied, as
// its result says.
//
// When a delivery fails, or ctx ends before an outcome is known (a
// *PendingError naming the first batch still waiting, whose rows are
// durable in the spool — also when ctx ended while a later batch was
// being delivered), Flush returns that error and no results: they are
// kept (Kept), and the next Flush (or Close) goes on from there.
func (wr *Writer[T]) Flush(ctx context.Context) ([]recordstore.BatchResult, error) {
	if err := wr.w.Flush(ctx); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			wr.mu.Lock()
			if len(wr.mu.spooled) > 0 {
				err = &PendingError{BatchID: wr.mu.spooled[0].id}
			}
			wr.mu.Unlock()
		}
		return nil, err
	}
	if err := wr.awaitSpooled(ctx); err != nil {
		return nil, err
	}
	wr.mu.Lock()
	results := wr.mu.results
	wr.mu.results = nil
	wr.mu.Unlock()
	var errs []error
	for _, r := range results {
		if r.Error != nil {
			errs = append(errs, fmt.Errorf("batch %s: %w", r.ID, r.Error))
		}
		for i, e := range r.Entries {
			if e.Error != nil {
				errs = append(errs, fmt.Errorf("batch %s entry %d (%s %s): %w", r.ID, i, e.Op, e.Stream, e.Error))
			}
		}
	}
	return results, errors.Join(errs...)
}

// Close flushes (see Flush) and makes the Writer refuse further writes
// (recordstore.ErrClosed). When the flush fails the Writer stays open, so
// that Close may be called again.
func (wr *Writer[T]) Close(ctx context.Context) ([]recordstore.BatchResult, error) {
	results, err := wr.Flush(ctx)
	if err != nil && results == nil {
		return nil, err
	}
	if cerr := wr.w.Close(ctx); cerr != nil {
		return results, errors.Join(err, cerr)
	}
	return results, err
}

// deliver is the spool.Writer's sink: it applies the batch here while this
// process owns the store, and publishes it otherwise. An error leaves the
// batch queued in the spool.Writer, to be delivered again with the same
// id (the ledger makes a second application a no-op).
func (wr *Writer[T]) deliver(ctx context.Context, d *recordstore.Batch) error {
	s := wr.s
	if err := s.ready(ctx); err != nil {
		return err // the batch stays queued: Pending counts it
	}
	if s.Role() == RoleOwner {
		// The batches published before this process became the owner
		// come first: its own drain applies them.
		if err := wr.awaitSpooled(ctx); err != nil {
			return err
		}
		if err := s.checkFence(); err != nil {
			return err
		}
		results, err := s.backend.AppendBatch(ctx, *d)
		if err != nil {
			return err
		}
		s.announce(results[0])
		wr.mu.Lock()
		wr.mu.results = append(wr.mu.results, results[0])
		wr.mu.Unlock()
		return nil
	}
	if _, err := s.spool.Publish(ctx, d, s.opts.Format); err != nil {
		return err
	}
	wr.mu.Lock()
	wr.mu.spooled = append(wr.mu.spooled, spooledBatch{id: d.ID, rows: d.Rows()})
	wr.mu.Unlock()
	s.nudge(ctx, d.ID)
	return nil
}

// awaitSpooled waits, in order, for the outcome of each batch this Writer
// published and keeps it for Flush. On error (a *PendingError when ctx
// ended) the batches still waiting stay listed.
func (wr *Writer[T]) awaitSpooled(ctx context.Context) error {
	wr.awaitMu.Lock()
	defer wr.awaitMu.Unlock()
	for {
		wr.mu.Lock()
		if len(wr.mu.spooled) == 0 {
			wr.mu.Unlock()
			return nil
		}
		id := wr.mu.spooled[0].id
		wr.mu.Unlock()
		// Published by this Writer: wait for it, without Await's look
		// for a batch nobody knows (a listing of incoming/ per batch).
		res, err := wr.s.await(ctx, id, false)
		if err != nil {
			return err
		}
		wr.mu.Lock()
		wr.mu.spooled = wr.mu.spooled[1:]
		wr.mu.results = append(wr.mu.results, res)
		wr.mu.Unlock()
	}
}
