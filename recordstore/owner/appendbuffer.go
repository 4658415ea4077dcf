// One-call append of rows held compactly (a recordstore.RowBuffer), under
// the spool's per-append limits in either role, so that an append that a
// spooled batch could not carry is refused by the owner too.

package owner

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// SourceAppender is the optional capability of a target that appends rows
// of stored values read from a RowSource, and prepares the batch of such
// an append without writing it; Store.AppendBuffer needs it, and
// sqlite.Backend and submitonly.Backend have it.
type SourceAppender interface {
	// AppendSource appends the rows of src, stored values of kind, to
	// stream in one all-or-nothing append.
	AppendSource(ctx context.Context, stream string, kind recordstore.Kind, src recordstore.RowSource) (recordstore.AppendResult, error)
	// PrepareAppendSource checks such an append as the owner would apply
	// it — declaring kind first when declare is set — and returns its
	// batch.
	PrepareAppendSource(ctx context.Context, stream string, kind recordstore.Kind, declare bool, src recordstore.RowSource) (recordstore.Batch, error)
}

// StreamPreparer is the optional capability of a target that prepares an
// append's batch whose rows stream from a RowSource as the batch is
// published (BatchEntry.Source), instead of holding them as
// SourceAppender.PrepareAppendSource does; sqlite.Backend has it.
// AppendBuffer uses it for a spooled append of streamMinRows rows or more,
// so that its memory does not grow with its rows.
type StreamPreparer interface {
	// PrepareAppendStream checks such an append as far as it can without
	// reading its rows and returns its batch, whose append entry reads
	// src when it is published.
	PrepareAppendStream(ctx context.Context, stream string, kind recordstore.Kind, declare bool, rows recordstore.Rows) (recordstore.Batch, error)
}

// streamMinRows is how many rows a spooled AppendBuffer streams into its
// batch's data file (StreamPreparer) from; fewer are held in the batch,
// which costs little.
const streamMinRows = 4096

// AppendBuffer appends the rows of rows — stored values of kind, as
// kind.Normalize returns them, in a recordstore.RowBuffer, a
// recordstore.RowSpill or as recordstore.ValueRows — to stream in one all-or-nothing append, as
// Append does with caller rows, but without a map per row: the owner
// inserts them as it reads them from rows. opts.Declare, when set, must be kind itself (the same name);
// it is declared with the rows.
//
// In either role the append must fit one spool batch: at most the spool's
// Limits.MaxRows rows, and at most Limits.MaxBytes bytes of NDJSON lines
// (see spool.Meter); otherwise it fails with errors.Is ErrCapacity
// (spool.ErrTooManyRows or spool.ErrTooLarge) before anything is declared,
// published or stored, so that an input gets the same answer whether this
// process owns the store or not. Appending more takes several appends
// (AppendFrom cuts them).
//
// The rest is Append's: the owner applies the append at once; any other
// process checks it locally (nothing is published when it is refused),
// sends it as one batch (written from rows as it is published, when the
// backend is a StreamPreparer and there are streamMinRows rows or more:
// then a row the owner's catalog cannot take fails the publish, and
// nothing is published) and waits for the owner's outcome until ctx ends
// (a *PendingError naming the batch, which stays in the spool and is
// applied once) or, with NoWait, returns once the batch is published.
func (s *Store[T]) AppendBuffer(ctx context.Context, stream string, kind *recordstore.Kind, rows recordstore.Rows, opts AppendOptions) (out Appended, err error) {
	defer s.countAppend(s.Role(), bufferedRows(rows), &err)
	defer s.waitReplicatedAfter(ctx, opts.WriteOptions, &out.Written, &err)
	if err := s.ready(ctx); err != nil {
		return Appended{}, err
	}
	if err := s.checkBuffered(stream, kind, rows, opts.Declare, opts.Metered); err != nil {
		return Appended{}, err
	}
	sa, ok := any(s.backend).(SourceAppender)
	if !ok {
		return Appended{}, recordstore.Errorf(recordstore.ErrUnsupported, "the store's backend cannot append rows from a source")
	}
	if s.Role() == RoleOwner {
		if err := s.checkFence(); err != nil {
			return Appended{}, err
		}
		if opts.Declare != nil {
			if _, err := s.backend.DeclareKind(ctx, *kind); err != nil {
				return Appended{}, err
			}
		}
		res, err := sa.AppendSource(ctx, stream, *kind, rows.Source())
		return Appended{AppendResult: res}, err
	}
	var batch recordstore.Batch
	if sp, ok := any(s.backend).(StreamPreparer); ok && rows.Len() >= streamMinRows {
		batch, err = sp.PrepareAppendStream(ctx, stream, *kind, opts.Declare != nil, rows)
	} else {
		batch, err = sa.PrepareAppendSource(ctx, stream, *kind, opts.Declare != nil, rows.Source())
	}
	if err != nil {
		return Appended{}, err
	}
	return s.sendAppend(ctx, stream, batch, opts.WriteOptions)
}

// checkBuffered refuses, before anything is written, what AppendBuffer
// cannot apply: no kind, a declaration of another kind, no rows, or rows
// past the spool's per-append limits (ErrCapacity), which it counts unless
// metered counted these rows already (AppendOptions.Metered).
func (s *Store[T]) checkBuffered(stream string, kind *recordstore.Kind, rows recordstore.Rows, declare *recordstore.Kind, metered *spool.Meter) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if kind == nil {
		return recordstore.Invalidf("append to %s: no kind", stream)
	}
	if declare != nil && declare.Name != kind.Name {
		return recordstore.Invalidf("append to %s: the declaration is of kind %s, not %s", stream, declare.Name, kind.Name)
	}
	if noRows(rows) || rows.Len() == 0 {
		return recordstore.Invalidf("append to %s: no rows", stream)
	}
	if metered.Counted(kind, s.spool.Limits(), int64(rows.Len())) {
		return nil
	}
	m := spool.NewMeter(kind, s.spool.Limits())
	if max := s.spool.Limits().MaxRows; max > 0 && int64(rows.Len()) > max {
		return fmt.Errorf("append to %s: %w: %d rows, the limit of one append is %d", stream, spool.ErrTooManyRows, rows.Len(), max)
	}
	src := rows.Source()
	for i := range src.Len() {
		v, err := src.Next()
		if err == nil {
			err = m.Add(v)
		}
		if err != nil {
			return fmt.Errorf("append to %s: row %d: %w", stream, i+1, err)
		}
	}
	return nil
}
