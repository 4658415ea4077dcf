// Writes: each mutation checked locally as far as this process can (it
// cannot read the catalog) and handed to Options.Submit as one batch.

package submitonly

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// submit hands one batch to Options.Submit through
// recordstore.SubmitBatch and returns the result of its last entry (the
// entry a declaration travels ahead of). An error of Submit itself is
// returned unchanged; an error the owner recorded for the batch or an
// entry is a *recordstore.BatchError, wrapped with what, so that
// errors.Is finds its sentinel.
func (b *Backend) submit(ctx context.Context, what string, batch recordstore.Batch) (recordstore.EntryResult, error) {
	if err := b.check(); err != nil {
		return recordstore.EntryResult{}, err
	}
	if b.opts.Submit == nil {
		return recordstore.EntryResult{}, b.readOnlyErr(what)
	}
	res, err := recordstore.SubmitBatch(ctx, b.opts.Submit, what, batch)
	if err != nil {
		return recordstore.EntryResult{}, err
	}
	return res.Entries[len(res.Entries)-1], nil
}

// DeclareKind declares k through Submit and keeps it in this process. A
// kind this process holds already as declared is KindUnchanged and
// nothing is submitted; a declaration conflicting with the one it holds is
// refused here (ErrSchemaConflict). The owner reconciles k with its
// catalog: its refusal (a conflict with a kind another process declared)
// is returned and k is not kept, nor is it when Submit fails.
func (b *Backend) DeclareKind(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	status, err := b.CheckDeclare(ctx, k)
	if err != nil {
		return "", err
	}
	if status == recordstore.KindUnchanged {
		return status, nil
	}
	what := "declare kind " + k.Name
	r, err := b.submit(ctx, what, recordstore.Batch{
		Schemas: []recordstore.Kind{k},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpDeclare, Kind: k.Name}},
	})
	if err != nil {
		return "", err
	}
	b.keep(k)
	return r.Status, nil
}

// Append checks rows against the kind this process declared (see
// PrepareAppend) and submits them; it returns the owner's exact result.
// On a local refusal nothing is submitted.
func (b *Backend) Append(ctx context.Context, stream, kind string, rows []recordstore.Row) (recordstore.AppendResult, error) {
	batch, err := b.PrepareAppend(ctx, stream, kind, nil, rows)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	return b.submitAppend(ctx, stream, batch)
}

// AppendSource checks the rows of src, stored values of kind, against the
// kind this process declared (see PrepareAppendSource) and submits them;
// it returns the owner's exact result.
func (b *Backend) AppendSource(ctx context.Context, stream string, kind recordstore.Kind, src recordstore.RowSource) (recordstore.AppendResult, error) {
	batch, err := b.PrepareAppendSource(ctx, stream, kind, false, src)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	return b.submitAppend(ctx, stream, batch)
}

// submitAppend submits an append's batch and returns its window.
func (b *Backend) submitAppend(ctx context.Context, stream string, batch recordstore.Batch) (recordstore.AppendResult, error) {
	r, err := b.submit(ctx, "append to "+stream, batch)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	if r.Append == nil {
		return recordstore.AppendResult{}, fmt.Errorf("append to %s: the owner's result has no append window", stream)
	}
	b.notifier.Notify(stream)
	return *r.Append, nil
}

// Seal submits the seal of stream; the owner decides whether it is live.
func (b *Backend) Seal(ctx context.Context, stream string) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: stream})
}

// Reopen submits the reopening of stream at generation.
func (b *Backend) Reopen(ctx context.Context, stream string, generation int64) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: stream, Generation: generation})
}

// Expire submits the expiry of stream after ttl (which must be positive).
func (b *Backend) Expire(ctx context.Context, stream string, ttl time.Duration) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: stream, TTL: ttl})
}

// Trim submits the removal of stream's rows appended before before.
func (b *Backend) Trim(ctx context.Context, stream string, before time.Time) (recordstore.Meta, error) {
	return b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: stream, Before: before})
}

// Delete submits the deletion of stream.
func (b *Backend) Delete(ctx context.Context, stream string) error {
	_, err := b.mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: stream})
	return err
}

// mutate checks a stream operation (PrepareEntry) and submits it,
// returning the stream's metadata as the owner left it (empty after a
// delete).
func (b *Backend) mutate(ctx context.Context, e recordstore.BatchEntry) (recordstore.Meta, error) {
	batch, err := b.PrepareEntry(ctx, e)
	if err != nil {
		return recordstore.Meta{}, err
	}
	r, err := b.submit(ctx, string(e.Op)+" "+e.Stream, batch)
	if err != nil {
		return recordstore.Meta{}, err
	}
	b.notifier.Notify(e.Stream)
	if r.Meta == nil {
		return recordstore.Meta{}, nil // delete
	}
	return *r.Meta, nil
}
