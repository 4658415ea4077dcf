// One-call write operations of a Store, in either role: an append (with
// its kind declared in the same batch), a stream operation, a set of kind
// declarations. The owner applies them at once; any other process checks
// them locally and sends one batch through the spool, then waits for the
// owner's outcome or, with NoWait, returns the batch's id.

package owner

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Preparer is the optional capability of a target that checks a write
// locally, as the store's owner would apply it, and builds the batch that
// carries it, writing nothing. The Store's write operations need it to
// publish a write without waiting (WriteOptions.NoWait) and to send a
// declaration in an append's own batch; sqlite.Backend and
// submitonly.Backend have it.
type Preparer interface {
	// PrepareAppend checks an append of rows of kind to stream — against
	// declare when it is not nil, which the batch then declares ahead of
	// the rows — and returns the batch.
	PrepareAppend(ctx context.Context, stream, kind string, declare *recordstore.Kind, rows []recordstore.Row) (recordstore.Batch, error)
	// PrepareEntry checks a stream operation and returns its batch.
	PrepareEntry(ctx context.Context, e recordstore.BatchEntry) (recordstore.Batch, error)
	// PrepareDeclare checks every kind as DeclareKind would and returns
	// the batch declaring them all.
	PrepareDeclare(ctx context.Context, kinds []recordstore.Kind) (recordstore.Batch, error)
}

// WriteOptions say how a write operation of a Store waits.
type WriteOptions struct {
	// NoWait makes a process that does not own the store return as soon
	// as the write's batch is in the spool (Written.Pending, naming
	// Written.Batch), without waiting for the owner: Await(Batch) gives
	// the outcome later, and the owner applies the batch once either way.
	// The owner applies a write at once, NoWait or not.
	NoWait bool
	// Spool makes a process that does not own the store send the write
	// through the spool even when the fast path (the owner's socket,
	// ActionAppend) could take it, as Options.SpoolOnly does for every
	// write. NoWait writes go through the spool, unless Fast.
	Spool bool
	// Fast, with NoWait, makes a process that does not own the store try
	// the fast path first: when the owner answers, the write is done as
	// without NoWait (not Pending, its result returned); otherwise its
	// batch is published to the spool, under the same id, and left
	// Pending as with NoWait alone. For a caller that awaits its batches
	// itself (Await) and wants the owner's answer at once when it comes.
	// Ignored without NoWait, with Spool or Options.SpoolOnly.
	Fast bool
	// Replicated makes the write (Append, AppendBuffer, Mutate,
	// DeclareKinds) return only once the store's replica holds its commit
	// (see Store.WaitReplicated). When the wait fails the write stays
	// applied and its error is a *NotReplicatedError. It does nothing
	// with NoWait through the spool (the write is pending).
	Replicated bool
}

// spoolOnlyKey marks a context whose writes go through the spool (see
// WriteOptions.Spool); submit reads it.
type spoolOnlyKey struct{}

// via returns ctx marked for the spool when o.Spool is set.
func (o WriteOptions) via(ctx context.Context) context.Context {
	if !o.Spool {
		return ctx
	}
	return context.WithValue(ctx, spoolOnlyKey{}, true)
}

// spoolOnly reports whether ctx asks for the spool (WriteOptions.Spool).
func spoolOnly(ctx context.Context) bool {
	v, _ := ctx.Value(spoolOnlyKey{}).(bool)
	return v
}

// Written says how a write operation of a Store went.
type Written struct {
	// Spooled is set when this process did not own the store: the write
	// went through the spool, and the owner applied it (or, Pending, will).
	Spooled bool
	// Batch is the id of the write's spool batch, when one is known: with
	// Pending, and after a write awaited through the spool that needed
	// the Preparer.
	Batch string
	// Pending is set with NoWait: the batch is in the spool, its outcome
	// not awaited, and the operation's result is empty.
	Pending bool
}

// AppendOptions configure Store.Append.
type AppendOptions struct {
	WriteOptions
	// Declare, when not nil, is a declaration of the rows' kind, which is
	// declared with the rows, strictly as DeclareKind does; the rows are
	// checked against it instead of the catalog's kind (a process
	// detached from the catalog can append only so, or after declaring
	// the kind itself). Through the spool it travels in the rows' batch,
	// ahead of them: the owner declares it and appends, or refuses both
	// when it conflicts with its catalog. The append can still be refused
	// alone (a sealed stream): the kind then stays declared, as it does
	// when the owner itself declares it and then appends.
	Declare *recordstore.Kind
	// Metered, for AppendBuffer, is the spool.Meter the caller counted
	// the rows with as it gathered them, against the spool's Limits (see
	// Store.Spool): when it counted exactly those rows, of the same kind
	// (the same *Kind), against those limits, AppendBuffer does not read
	// the rows a second time to count them. Otherwise it is ignored.
	Metered *spool.Meter
}

// Appended is the outcome of Store.Append: the append's window (empty
// while Pending) and how the write went.
type Appended struct {
	recordstore.AppendResult
	Written
}

// Mutated is the outcome of Store.Mutate: the stream's metadata after the
// operation (nil after a delete, and while Pending) and how it went.
type Mutated struct {
	Meta *recordstore.Meta
	Written
}

// Declared is the outcome of Store.DeclareKinds: the status of each kind
// declared, in order (none while Pending), and how it went.
type Declared struct {
	Statuses []recordstore.KindStatus
	Written
}

// Append appends rows of kind to stream in one all-or-nothing append, as
// the backend's Append does, declaring the kind first when opts.Declare is
// set. The owner applies it at once. Any other process checks it locally
// (the rows fit the kind with no key repeated, the stream is not of
// another kind nor sealed: refused here with the backend's error, and
// nothing is published) and sends it as one spool batch, then waits for
// the owner's outcome until ctx ends (a *PendingError naming the batch:
// the batch stays in the spool and is applied once) or, with NoWait,
// returns as soon as the batch is published. In either role an append of
// more rows than the spool's Limits.MaxRows is refused (ErrCapacity,
// spool.ErrTooManyRows) before anything is done: one spool batch could not
// carry it. (Its bytes are checked against Limits.MaxBytes when it is
// published; AppendBuffer checks them in either role.) An error the owner
// recorded is returned wrapped ("append to stream: ..."), errors.Is
// finding its sentinel. On an error before the publish nothing was
// published or applied.
func (s *Store[T]) Append(ctx context.Context, stream, kind string, rows []recordstore.Row, opts AppendOptions) (out Appended, err error) {
	defer s.countAppend(s.Role(), len(rows), &err)
	defer s.waitReplicatedAfter(ctx, opts.WriteOptions, &out.Written, &err)
	if err := s.ready(ctx); err != nil {
		return Appended{}, err
	}
	ctx = opts.via(ctx)
	if max := s.spool.Limits().MaxRows; max > 0 && int64(len(rows)) > max {
		return Appended{}, fmt.Errorf("append to %s: %w: %d rows, the limit of one append is %d", stream, spool.ErrTooManyRows, len(rows), max)
	}
	if s.Role() == RoleOwner {
		return s.appendOwned(ctx, stream, kind, rows, opts.Declare)
	}
	spooled := Written{Spooled: true}
	if opts.Declare == nil && !opts.NoWait {
		// The read-only backend checks, submits and waits.
		res, err := s.backend.Append(ctx, stream, kind, rows)
		return Appended{AppendResult: res, Written: spooled}, err
	}
	p, err := s.preparer()
	if err != nil {
		return Appended{}, err
	}
	batch, err := p.PrepareAppend(ctx, stream, kind, opts.Declare, rows)
	if err != nil {
		return Appended{}, err
	}
	return s.sendAppend(ctx, stream, batch, opts.WriteOptions)
}

// appendOwned is Append in the owner: the declaration, then the append.
func (s *Store[T]) appendOwned(ctx context.Context, stream, kind string, rows []recordstore.Row, declare *recordstore.Kind) (Appended, error) {
	if err := s.checkFence(); err != nil {
		return Appended{}, err
	}
	if declare != nil {
		if declare.Name != kind {
			return Appended{}, recordstore.Invalidf("append to %s: the declaration is of kind %s, not %s", stream, declare.Name, kind)
		}
		if _, err := s.backend.DeclareKind(ctx, *declare); err != nil {
			return Appended{}, err
		}
	}
	res, err := s.backend.Append(ctx, stream, kind, rows)
	return Appended{AppendResult: res}, err
}

// Mutate applies one stream operation — e.Op is OpSeal, OpReopen (at
// e.Generation), OpExpire (e.TTL), OpTrim (e.Before) or OpDelete — as the
// backend's method of that name does, and returns the stream's metadata
// after it. The owner applies it at once; any other process checks it
// locally (the stream is live: ErrNotFound otherwise, nothing published)
// and sends it through the spool, waiting for the owner's outcome until
// ctx ends (a *PendingError naming the batch) or, with NoWait, returning
// once the batch is published.
func (s *Store[T]) Mutate(ctx context.Context, e recordstore.BatchEntry, opts WriteOptions) (out Mutated, err error) {
	defer s.waitReplicatedAfter(ctx, opts, &out.Written, &err)
	if err := s.ready(ctx); err != nil {
		return Mutated{}, err
	}
	ctx = opts.via(ctx)
	spooled := s.Role() != RoleOwner
	if spooled && opts.NoWait {
		p, err := s.preparer()
		if err != nil {
			return Mutated{}, err
		}
		batch, err := p.PrepareEntry(ctx, e)
		if err != nil {
			return Mutated{}, err
		}
		w, res, err := s.sendPrepared(ctx, batch, opts, string(e.Op)+" "+e.Stream)
		if err != nil || w.Pending {
			return Mutated{Written: w}, err
		}
		return Mutated{Meta: res.Entries[len(res.Entries)-1].Meta, Written: w}, nil // answered on the fast path
	}
	if !spooled {
		if err := s.checkFence(); err != nil {
			return Mutated{}, err
		}
	}
	m, err := s.mutateBackend(ctx, e)
	return Mutated{Meta: m, Written: Written{Spooled: spooled}}, err
}

// mutateBackend calls the backend's method for e (which, read-only,
// submits it and waits).
func (s *Store[T]) mutateBackend(ctx context.Context, e recordstore.BatchEntry) (*recordstore.Meta, error) {
	var m recordstore.Meta
	var err error
	switch e.Op {
	case recordstore.OpSeal:
		m, err = s.backend.Seal(ctx, e.Stream)
	case recordstore.OpReopen:
		m, err = s.backend.Reopen(ctx, e.Stream, e.Generation)
	case recordstore.OpExpire:
		m, err = s.backend.Expire(ctx, e.Stream, e.TTL)
	case recordstore.OpTrim:
		m, err = s.backend.Trim(ctx, e.Stream, e.Before)
	case recordstore.OpDelete:
		return nil, s.backend.Delete(ctx, e.Stream)
	default:
		return nil, recordstore.Invalidf("%s %s: not a stream operation", e.Op, e.Stream)
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// DeclareKinds checks every kind of kinds as DeclareKind would (valid,
// reconciling with the catalog's declaration) and, when none is refused,
// declares them in order. When one is refused nothing is declared: the
// error names it. A process detached from the catalog checks each kind
// alone, and the owner reconciles them one by one, so that a conflict
// stops at that kind and the ones before it stay declared (Statuses lists
// them). Without NoWait, a non-owner sends each declaration through the
// spool and waits for it (until ctx ends: a *PendingError naming its
// batch); with NoWait it publishes them all in one batch and returns.
func (s *Store[T]) DeclareKinds(ctx context.Context, kinds []recordstore.Kind, opts WriteOptions) (res Declared, err error) {
	defer s.waitReplicatedAfter(ctx, opts, &res.Written, &err)
	if err := s.ready(ctx); err != nil {
		return Declared{}, err
	}
	ctx = opts.via(ctx)
	p, err := s.preparer()
	if err != nil {
		return Declared{}, err
	}
	batch, err := p.PrepareDeclare(ctx, kinds)
	if err != nil {
		return Declared{}, err
	}
	spooled := s.Role() != RoleOwner
	if spooled && opts.NoWait {
		w, res, err := s.sendPrepared(ctx, batch, opts, "declare kinds")
		out := Declared{Written: w}
		if err == nil && !w.Pending { // answered on the fast path
			for _, e := range res.Entries {
				out.Statuses = append(out.Statuses, e.Status)
			}
		}
		return out, err
	}
	out := Declared{Written: Written{Spooled: spooled}}
	for _, k := range kinds {
		if !spooled {
			if err := s.checkFence(); err != nil {
				return out, err
			}
		}
		status, err := s.backend.DeclareKind(ctx, k)
		if err != nil {
			return out, err
		}
		out.Statuses = append(out.Statuses, status)
	}
	return out, nil
}

// preparer is the target as a Preparer.
func (s *Store[T]) preparer() (Preparer, error) {
	p, ok := any(s.backend).(Preparer)
	if !ok {
		return nil, recordstore.Errorf(recordstore.ErrUnsupported, "the store's backend cannot prepare a write for the spool")
	}
	return p, nil
}

// sendPrepared sends a prepared batch to the owner: published and left
// pending with NoWait (tried on the fast path first with Fast, and then
// done when the owner answered), else submitted (the fast path, or the
// spool) and awaited. The owner's
// result comes back with an entry result per entry; an error it recorded
// (the batch's, or its first refused entry's) is returned wrapped with
// what. On a publish error nothing was published.
func (s *Store[T]) sendPrepared(ctx context.Context, batch recordstore.Batch, opts WriteOptions, what string) (Written, recordstore.BatchResult, error) {
	w := Written{Spooled: true}
	if opts.NoWait && opts.Fast && !opts.Spool && !s.fastPathOff() && !spoolOnly(ctx) && s.Role() != RoleOwner {
		id, res, done, err := s.fastOrPublish(ctx, batch)
		if err != nil && !done {
			return w, recordstore.BatchResult{}, err
		}
		w.Batch, w.Pending = id, !done
		if !done {
			return w, recordstore.BatchResult{}, nil
		}
		res, err = recordstore.SubmitBatch(ctx, func(context.Context, recordstore.Batch) (recordstore.BatchResult, error) { return res, err }, what, batch)
		return w, res, err
	}
	if opts.NoWait {
		id, err := s.Publish(ctx, batch)
		if err != nil {
			return w, recordstore.BatchResult{}, err
		}
		w.Batch, w.Pending = id, true
		return w, recordstore.BatchResult{}, nil
	}
	res, err := recordstore.SubmitBatch(ctx, s.submit, what, batch) // a *PendingError names the batch
	w.Batch = res.ID
	return w, res, err
}

// sendAppend publishes a prepared append's batch (its last entry is the
// append) and, unless opts.NoWait, returns the owner's window for it.
func (s *Store[T]) sendAppend(ctx context.Context, stream string, batch recordstore.Batch, opts WriteOptions) (Appended, error) {
	w, res, err := s.sendPrepared(ctx, batch, opts, "append to "+stream)
	if err != nil || w.Pending {
		return Appended{Written: w}, err
	}
	last := res.Entries[len(res.Entries)-1]
	if last.Append == nil {
		return Appended{Written: w}, fmt.Errorf("append to %s: the owner's result has no append window", stream)
	}
	return Appended{AppendResult: *last.Append, Written: w}, nil
}
