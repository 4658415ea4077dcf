// Delivery: one batch in memory — what a Writer hands to its Sink and what
// Folder.ReadAll returns — and the Sink interface.

package spool

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Delivery is one batch in memory: the manifest's header and entries with
// their rows as normalized values (in the column order of the entry's
// schema). Entry file fields (File, Format, Rows, Bytes, SHA256) are filled
// by Publish; a Sink that delivers directly ignores them.
type Delivery struct {
	ID       string
	Producer Producer
	Created  time.Time
	Schemas  []recordstore.Kind
	Entries  []DeliveryEntry
}

// DeliveryEntry is one entry of a Delivery.
type DeliveryEntry struct {
	Entry
	// Values are the rows of an append entry, normalized for the schema
	// named by Entry.Kind.
	Values []recordstore.Values
}

// Name returns the batch folder name of the delivery.
func (d *Delivery) Name() BatchName {
	return BatchName{Created: d.Created, Instance: d.Producer.Instance, Seq: d.Producer.Seq, ID: d.ID}
}

// Rows returns the number of rows of all entries.
func (d *Delivery) Rows() int64 {
	var n int64
	for _, e := range d.Entries {
		n += int64(len(e.Values))
	}
	return n
}

// Schema returns the delivery's schema named name, or nil.
func (d *Delivery) Schema(name string) *recordstore.Kind {
	for i := range d.Schemas {
		if d.Schemas[i].Name == name {
			return &d.Schemas[i]
		}
	}
	return nil
}

// Sink receives the batches a Writer cuts, in order. Deliver must be
// all-or-nothing: when it returns an error the Writer delivers the same
// Delivery (same id and seq) again before anything later.
type Sink interface {
	Deliver(ctx context.Context, d *Delivery) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, d *Delivery) error

// Deliver calls f.
func (f SinkFunc) Deliver(ctx context.Context, d *Delivery) error { return f(ctx, d) }

// Sink returns the Sink that publishes deliveries into d with the codec
// named format (see Publish).
func (d *Dir) Sink(format string) (Sink, error) {
	if _, err := Lookup(format); err != nil {
		return nil, err
	}
	return SinkFunc(func(ctx context.Context, del *Delivery) error {
		_, err := d.Publish(ctx, del, format)
		return err
	}), nil
}
