// Wiring an owner.Store into the multi-process harness: OwnerOptions maps a
// child's options onto owner.Options, OwnerChild adapts the store.

package recordstoretest

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
)

// OwnerOptions returns the owner.Options of a child's store at path: the
// child's StoreOptions, its logger, its failpoint hook (for the owner's
// failpoints and the spool's publish steps) and its role and batch events.
// The caller adds what is its own (CatalogVersion, and anything else):
//
//	func openMyStore(ctx context.Context, path string, o recordstoretest.ChildOptions) (recordstoretest.ChildStore, error) {
//		opts := recordstoretest.OwnerOptions(path, o, func(ctx context.Context, ro bool, submit owner.Submitter) (*sqlite.Backend, error) {
//			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: ro, Submit: submit})
//		})
//		opts.CatalogVersion = sqlite.CatalogVersion
//		s, err := owner.Open(ctx, opts)
//		if err != nil {
//			return nil, err
//		}
//		return recordstoretest.OwnerChild(s), nil
//	}
func OwnerOptions[T owner.Target](path string, o ChildOptions, open func(ctx context.Context, readOnly bool, submit owner.Submitter) (T, error)) owner.Options[T] {
	opts := owner.Options[T]{
		Path:         path,
		Open:         open,
		Build:        o.Build,
		Format:       o.Format,
		StartWait:    o.StartWait,
		DrainOnClose: o.DrainOnClose,
		PollMin:      o.PollMin,
		PollMax:      o.PollMax,
		Heartbeat:    o.Heartbeat,
		GapWait:      o.GapWait,
		GCInterval:   o.GCInterval,
		GC:           spool.GCOptions{TmpAge: o.TmpAge, FailedAge: o.FailedAge},
		Spool:        spool.Options{Logger: o.Logger, Failpoint: o.Failpoint},
		Logger:       o.Logger,
		Failpoint:    o.Failpoint,
		// A deferred open elects at its first write.
		DeferElection: o.DeferElection,
		SpoolOnly:     o.SpoolOnly,
	}
	if o.OnRole != nil {
		opts.Events.Role = func(r owner.Role) { o.OnRole(string(r)) }
	}
	opts.Events.Batch = o.OnBatch
	return opts
}

// OwnerChild adapts an owner.Store to ChildStore.
func OwnerChild[T owner.Target](s *owner.Store[T]) ChildStore {
	return ownerChild[T]{s: s}
}

type ownerChild[T owner.Target] struct {
	s *owner.Store[T]
}

func (o ownerChild[T]) Backend() recordstore.Backend { return o.s.Backend() }

func (o ownerChild[T]) Role() string { return string(o.s.Role()) }

func (o ownerChild[T]) Publish(ctx context.Context, b recordstore.Batch) (string, error) {
	return o.s.Publish(ctx, b)
}

func (o ownerChild[T]) Await(ctx context.Context, id string) (recordstore.BatchResult, error) {
	return o.s.Await(ctx, id)
}

func (o ownerChild[T]) Status(ctx context.Context) (any, error) { return o.s.Status(ctx) }

func (o ownerChild[T]) Close() error { return o.s.Close() }

// NewBulkWriter returns the store's role-aware owner.Writer.
func (o ownerChild[T]) NewBulkWriter(maxRows int64) BulkWriter {
	return o.s.NewWriter(spool.WriterOptions{MaxRows: maxRows})
}
