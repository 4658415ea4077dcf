// The Sink a Writer delivers its batches to, and the batch folder name of
// a recordstore.Batch.

package spool

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
)

// NameOf returns the batch folder name b is published under.
func NameOf(b *recordstore.Batch) BatchName {
	return BatchName{Created: b.Created, Instance: b.Producer.Instance, Seq: b.Producer.Seq, ID: b.ID}
}

// Sink receives the batches a Writer cuts, in order, their rows normalized
// for their schemas (in the schema's column order). Deliver must be
// all-or-nothing: when it returns an error the Writer delivers the same
// batch (same id and seq) again before anything later.
type Sink interface {
	Deliver(ctx context.Context, b *recordstore.Batch) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, b *recordstore.Batch) error

// Deliver calls f.
func (f SinkFunc) Deliver(ctx context.Context, b *recordstore.Batch) error { return f(ctx, b) }

// Sink returns the Sink that publishes batches into d with the codec named
// format (see Publish).
func (d *Dir) Sink(format string) (Sink, error) {
	if _, err := Lookup(format); err != nil {
		return nil, err
	}
	return SinkFunc(func(ctx context.Context, b *recordstore.Batch) error {
		_, err := d.Publish(ctx, b, format)
		return err
	}), nil
}
