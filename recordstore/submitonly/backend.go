// The Backend type: opening, closing, the reads that fail with the cause
// it was opened with, and the owner's work it refuses.

package submitonly

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Options configures Open.
type Options struct {
	// Cause is why this process cannot read the store; every read returns
	// an error wrapping it, so that errors.Is and errors.As find it.
	// Required.
	Cause error
	// Submit applies a mutation, as one batch, through the process that
	// owns the store, and returns the ledger's result for it. The backend
	// fills Schemas and Entries; the submitter fills ID, Producer and
	// Created. Without Submit every mutation fails with
	// recordstore.ErrReadOnly.
	Submit func(ctx context.Context, b recordstore.Batch) (recordstore.BatchResult, error)
	// CheckKind, when set, holds a declaration to the rules of the
	// store's backend beyond recordstore's (for the SQLite backend, its
	// reserved names: sqlite.CheckKindName), so that a declaration the
	// owner would refuse is refused here, before anything is submitted.
	CheckKind func(k recordstore.Kind) error
	// LivePath is what LivePath returns: the owner's live file, which this
	// process does not open (informative only).
	LivePath string
}

// Backend is a store this process writes through Submit and cannot read
// (see the package documentation).
type Backend struct {
	path     string // the configured store path, for messages
	opts     Options
	notifier *recordstore.Notifier
	closed   atomic.Bool

	mu    sync.Mutex
	kinds map[string]recordstore.Kind // declared by this process, by exact name; guarded by mu
}

var (
	_ recordstore.Backend       = (*Backend)(nil)
	_ recordstore.Sweeper       = (*Backend)(nil)
	_ recordstore.BatchAppender = (*Backend)(nil)
	_ recordstore.ChangeSource  = (*Backend)(nil)
)

// Open returns the submit-only backend of the store configured at path
// (made absolute, for messages). It touches no file; it fails only with
// recordstore.ErrInvalid, when opts.Cause is nil.
func Open(path string, opts Options) (*Backend, error) {
	if opts.Cause == nil {
		return nil, recordstore.Invalidf("open store %s submit-only: Options.Cause is required", path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &Backend{
		path:     path,
		opts:     opts,
		notifier: recordstore.NewNotifier(),
		kinds:    map[string]recordstore.Kind{},
	}, nil
}

// Close marks the backend closed: every later call returns an error
// wrapping recordstore.ErrClosed. It is idempotent; nothing is on disk.
func (b *Backend) Close() error {
	b.closed.Store(true)
	return nil
}

// Path returns the configured store path.
func (b *Backend) Path() string { return b.path }

// LivePath returns Options.LivePath.
func (b *Backend) LivePath() string { return b.opts.LivePath }

// Notifier returns the notifier woken after each mutation this process
// submitted (nothing else: it cannot follow the owner's file).
func (b *Backend) Notifier() *recordstore.Notifier { return b.notifier }

// Epoch returns 0: the epoch is in a file this process cannot read.
func (b *Backend) Epoch() int64 { return 0 }

// ReadOnly reports true: this process never writes the store itself.
func (b *Backend) ReadOnly() bool { return true }

// Detached returns Options.Cause: why this backend cannot read.
func (b *Backend) Detached() error { return b.opts.Cause }

// check returns an error wrapping recordstore.ErrClosed after Close.
func (b *Backend) check() error {
	if b.closed.Load() {
		return fmt.Errorf("records submit-only %s: %w", b.path, recordstore.ErrClosed)
	}
	return nil
}

// refuseRead is what every read returns: ErrClosed after Close, else an
// error wrapping Options.Cause.
func (b *Backend) refuseRead(what string) error {
	if err := b.check(); err != nil {
		return err
	}
	return fmt.Errorf("%s: store %s is open detached: %w", what, b.path, b.opts.Cause)
}

// readOnlyErr is what the owner's work, and a mutation without Submit,
// returns.
func (b *Backend) readOnlyErr(what string) error {
	if err := b.check(); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w: store %s is open read-only", what, recordstore.ErrReadOnly, b.path)
}

// Kinds fails with the cause.
func (b *Backend) Kinds(context.Context) ([]recordstore.Kind, error) {
	return nil, b.refuseRead("list kinds")
}

// Kind fails with the cause.
func (b *Backend) Kind(_ context.Context, name string) (recordstore.Kind, error) {
	return recordstore.Kind{}, b.refuseRead("read kind " + name)
}

// Scan fails with the cause.
func (b *Backend) Scan(_ context.Context, stream string, _ recordstore.ScanOptions) ([]recordstore.Record, error) {
	return nil, b.refuseRead("scan " + stream)
}

// Meta fails with the cause.
func (b *Backend) Meta(_ context.Context, stream string) (recordstore.Meta, error) {
	return recordstore.Meta{}, b.refuseRead("meta " + stream)
}

// Streams fails with the cause.
func (b *Backend) Streams(context.Context, string) ([]recordstore.Meta, error) {
	return nil, b.refuseRead("list streams")
}

// BatchOutcome fails with the cause: the ledger cannot be read (which is
// not ErrNotFound: the batch may well be applied).
func (b *Backend) BatchOutcome(_ context.Context, id string) (recordstore.BatchResult, error) {
	return recordstore.BatchResult{}, b.refuseRead("batch outcome " + id)
}

// ProducerSeq fails with the cause.
func (b *Backend) ProducerSeq(_ context.Context, instance string) (int64, error) {
	return 0, b.refuseRead("read producer " + instance + " in the ledger")
}

// WatchChanges fails with the cause at once, never calling changed.
func (b *Backend) WatchChanges(context.Context, func()) error {
	return b.refuseRead("watch changes")
}

// Promote fails with the cause: promoted, this process would write a live
// file of its own catalog version and hide the store's data from every
// other build.
func (b *Backend) Promote(context.Context) error {
	return b.refuseRead("promote")
}

// AppendBatch is the owner's work: refused with recordstore.ErrReadOnly.
func (b *Backend) AppendBatch(context.Context, ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	return nil, b.readOnlyErr("append batch")
}

// SweepBatches is the owner's work: refused with recordstore.ErrReadOnly.
func (b *Backend) SweepBatches(context.Context, time.Time) (int64, error) {
	return 0, b.readOnlyErr("sweep batches")
}

// Sweep is the owner's work: refused with recordstore.ErrReadOnly.
func (b *Backend) Sweep(context.Context) error { return b.readOnlyErr("sweep") }

// Sync is the owner's work: refused with recordstore.ErrReadOnly.
func (b *Backend) Sync(context.Context) error { return b.readOnlyErr("sync") }
