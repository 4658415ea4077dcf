// Bulk append: the rows of a source too large to hold, cut into batches of
// a fixed number of rows, each applied all-or-nothing, in order, through
// the Store's bulk Writer.

package owner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// RowReader yields the rows of a bulk append one at a time.
type RowReader interface {
	// Next returns the next row, or io.EOF after the last one. Any other
	// error stops the bulk append (see Store.AppendFrom).
	Next() (recordstore.Row, error)
}

// BulkOptions configure Store.AppendFrom.
type BulkOptions struct {
	// BatchRows is how many rows each batch holds, the last one fewer
	// (0 means spool.DefaultMaxBatchRows). A batch is one append, so the
	// rows of a batch are held in memory together. More than the spool's
	// Limits.MaxRows is refused (ErrCapacity) in either role, before any
	// row is read: such a batch could not be published.
	BatchRows int64
	// Declare declares the kind (strictly, as DeclareKind does) before
	// the first batch.
	Declare bool
}

// BulkAppended is the outcome of Store.AppendFrom, also of one that
// stopped (BulkError.Done): the windows of the batches applied, together —
// the first From, the last To, the counts summed.
type BulkAppended struct {
	recordstore.AppendResult
	// Batches counts the batches with an outcome: applied, or refused by
	// the owner (a sealed stream).
	Batches int
	// Spooled is set when this process did not own the store at the end:
	// the batches (some of them, after a promotion) went through the spool.
	Spooled bool
	// UnansweredBatches and UnansweredRows count, when the wait for the
	// owner ran out (a *PendingError), the batches durable in the spool and
	// not applied yet, and their rows: the owner applies them without this
	// process.
	UnansweredBatches int
	UnansweredRows    int64
}

// BulkError is the error of a bulk append that stopped: why (Err, which
// errors.Is and errors.As see through), and what its batches had done by
// then (Done). The batches applied before stay applied.
type BulkError struct {
	Err  error
	Done BulkAppended
}

// Error is Err's text, followed by what was applied and what still waits.
func (e *BulkError) Error() string {
	msg := fmt.Sprintf("%v (applied: %d rows in %s)", e.Err, e.Done.Appended+e.Done.Skipped, plural(e.Done.Batches, "batch", "batches"))
	if e.Done.UnansweredBatches > 0 {
		msg += fmt.Sprintf(" (spooled, not applied yet: %d rows in %s)", e.Done.UnansweredRows, plural(e.Done.UnansweredBatches, "batch", "batches"))
	}
	return msg
}

// Unwrap returns Err.
func (e *BulkError) Unwrap() error { return e.Err }

// AppendFrom appends the rows of src to stream, as rows of kind, in
// batches of opts.BatchRows rows: each batch is one append, applied
// all-or-nothing — directly while this process owns the store, through the
// spool otherwise — and awaited before the next is read. The rows of src
// as a whole are not one append. It stops, with a *BulkError saying what
// was applied:
//
//   - at a row src cannot give (an error of Next): the rows read before it
//     are applied first, as a last, shorter batch;
//   - at a batch refused before it is delivered (a row that does not fit
//     the kind, a key repeated inside the batch: ErrInvalid): nothing of
//     that batch is applied;
//   - at a batch the owner refuses (a sealed stream: errors.Is ErrSealed);
//   - when ctx ends while the owner has not applied a delivered batch (a
//     *PendingError naming it): that batch is durable in the spool and will
//     be applied, once; Done counts it as unanswered.
//
// A source error is returned as is (wrapped in the BulkError), so that
// the caller's own errors, naming its input's lines, reach its user.
func (s *Store[T]) AppendFrom(ctx context.Context, stream string, kind *recordstore.Kind, src RowReader, opts BulkOptions) (BulkAppended, error) {
	if err := s.ready(ctx); err != nil {
		return BulkAppended{}, err
	}
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return BulkAppended{}, err
	}
	if kind == nil {
		return BulkAppended{}, recordstore.Invalidf("append to %s: no kind", stream)
	}
	n := opts.BatchRows
	if n <= 0 {
		n = spool.DefaultMaxBatchRows
	}
	if max := s.spool.Limits().MaxRows; max > 0 && n > max {
		return BulkAppended{}, fmt.Errorf("append to %s: %w: batches of %d rows, the limit of one batch is %d", stream, spool.ErrTooManyRows, n, max)
	}
	if opts.Declare {
		if err := s.checkFence(); err != nil {
			return BulkAppended{}, err
		}
		if _, err := s.backend.DeclareKind(ctx, *kind); err != nil {
			return BulkAppended{}, err
		}
	}
	b := bulk[T]{s: s, ctx: ctx, stream: stream, kind: kind, w: s.NewWriter(spool.WriterOptions{MaxRows: n})}
	b.done.Stream, b.done.Kind = stream, kind.Name
	rows := make([]recordstore.Row, 0, min(n, 1024))
	for {
		row, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return b.stop(errors.Join(err, b.deliver(rows)))
		}
		if rows = append(rows, row); int64(len(rows)) == n {
			if err := b.deliver(rows); err != nil {
				return b.stop(err)
			}
			rows = rows[:0]
		}
	}
	if err := b.deliver(rows); err != nil {
		return b.stop(err)
	}
	if _, err := b.w.Close(ctx); err != nil { // nothing is buffered
		return b.stop(err)
	}
	b.done.Spooled = s.Role() != RoleOwner
	return b.done, nil
}

// bulk is the state of one AppendFrom.
type bulk[T Target] struct {
	s      *Store[T]
	ctx    context.Context
	stream string
	kind   *recordstore.Kind
	w      *Writer[T]
	done   BulkAppended
}

// deliver applies rows as one batch and waits for its outcome, adding it
// to done. No rows, no batch.
func (b *bulk[T]) deliver(rows []recordstore.Row) error {
	if len(rows) == 0 {
		return nil
	}
	if err := b.w.Append(b.ctx, b.stream, b.kind, rows); err != nil {
		return err // refused: nothing of it is buffered
	}
	results, err := b.w.Flush(b.ctx)
	if results == nil {
		results = b.w.Kept()
	}
	b.add(results)
	return err
}

// add sums the appends of results into done.
func (b *bulk[T]) add(results []recordstore.BatchResult) {
	for _, r := range results {
		b.done.Batches++
		for _, e := range r.Entries {
			if e.Append == nil {
				continue
			}
			if b.done.From == 0 {
				b.done.From = e.Append.From
			}
			b.done.To = e.Append.To
			b.done.Appended += e.Append.Appended
			b.done.Skipped += e.Append.Skipped
			b.done.Replaced += e.Append.Replaced
		}
	}
}

// stop ends AppendFrom with err and what was done.
func (b *bulk[T]) stop(err error) (BulkAppended, error) {
	b.done.UnansweredBatches, b.done.UnansweredRows = b.w.Unanswered()
	b.done.Spooled = b.s.Role() != RoleOwner
	return b.done, &BulkError{Err: err, Done: b.done}
}

// plural is n with one or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
