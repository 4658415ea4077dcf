// The Backend interface every store implements, and the small optional
// capability interfaces found by type assertion.

package recordstore

import (
	"context"
	"time"
)

// Backend is a record store. Implementations are safe for concurrent use by
// many goroutines; concurrent appends to one stream are serialized and each
// gets a contiguous window. Every mutating call is all-or-nothing: when it
// returns an error nothing it was asked to write is stored.
type Backend interface {
	// DeclareKind declares a kind or reconciles it additively with the
	// stored declaration (see Reconcile).
	DeclareKind(ctx context.Context, k Kind) (KindStatus, error)
	// Kinds lists the declared kinds, sorted by name.
	Kinds(ctx context.Context) ([]Kind, error)
	// Kind returns one declared kind (ErrNotFound if unknown).
	Kind(ctx context.Context, name string) (Kind, error)

	// Append appends rows of kind to stream, creating the stream (or its
	// next generation, after a delete or expiry) on first use. A key
	// repeated inside rows refuses the whole append with ErrInvalid; an
	// empty rows slice is ErrInvalid.
	Append(ctx context.Context, stream, kind string, rows []Row) (AppendResult, error)
	// Scan returns the rows of stream's current generation with seq >
	// opts.After, in seq order, at most opts.Limit of them.
	Scan(ctx context.Context, stream string, opts ScanOptions) ([]Record, error)
	// Meta describes a live stream (ErrNotFound when it does not exist,
	// was deleted, or has expired).
	Meta(ctx context.Context, stream string) (Meta, error)
	// Streams lists live streams, of one kind when kind is not "", sorted
	// by stream id.
	Streams(ctx context.Context, kind string) ([]Meta, error)

	// Seal makes a stream refuse further appends (ErrSealed). Idempotent.
	Seal(ctx context.Context, stream string) (Meta, error)
	// Reopen unseals a stream, fenced by generation: when generation is
	// not the stream's current one it fails with ErrNotFound.
	Reopen(ctx context.Context, stream string, generation int64) (Meta, error)
	// Expire makes a stream expire ttl from now (ttl must be > 0).
	Expire(ctx context.Context, stream string, ttl time.Duration) (Meta, error)
	// Trim drops the rows of every append made before the given time.
	Trim(ctx context.Context, stream string, before time.Time) (Meta, error)
	// Delete removes a stream and its rows. Appending to it again starts a
	// new generation at seq 1.
	Delete(ctx context.Context, stream string) error

	// Notifier wakes followers when streams change.
	Notifier() *Notifier
	// Close releases the store. Calls after Close fail with ErrClosed.
	Close() error
}

// Sweeper is implemented by backends that enforce retention in the
// background; Sweep runs one pass now.
type Sweeper interface {
	Sweep(ctx context.Context) error
}
