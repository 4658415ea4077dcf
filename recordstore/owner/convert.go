// Conversions between the spool's deliveries (what travels on disk) and the
// record model's batches (what a backend applies).

package owner

import (
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// toBatch turns a loaded delivery into the batch a backend applies.
func toBatch(d *spool.Delivery) recordstore.Batch {
	b := recordstore.Batch{
		ID:      d.ID,
		Created: d.Created,
		Schemas: d.Schemas,
		Producer: recordstore.Producer{Instance: d.Producer.Instance, Seq: d.Producer.Seq,
			PID: d.Producer.Pid, Host: d.Producer.Host, Build: d.Producer.Build},
		Entries: make([]recordstore.BatchEntry, len(d.Entries)),
	}
	for i, e := range d.Entries {
		be := recordstore.BatchEntry{Op: recordstore.BatchOp(e.Op), Stream: e.Stream, Kind: e.Kind,
			Rows: e.Values, Seal: e.Seal, Generation: e.Generation, TTL: time.Duration(e.TTL)}
		if e.Before != nil {
			be.Before = *e.Before
		}
		b.Entries[i] = be
	}
	return b
}

// toDelivery turns a batch submitted by a read-only backend into a delivery
// to publish.
func toDelivery(b recordstore.Batch) *spool.Delivery {
	d := &spool.Delivery{
		ID:      b.ID,
		Created: b.Created,
		Schemas: b.Schemas,
		Producer: spool.Producer{Instance: b.Producer.Instance, Seq: b.Producer.Seq,
			Pid: b.Producer.PID, Host: b.Producer.Host, Build: b.Producer.Build},
		Entries: make([]spool.DeliveryEntry, len(b.Entries)),
	}
	for i, e := range b.Entries {
		de := spool.DeliveryEntry{Entry: spool.Entry{Op: spool.Op(e.Op), Stream: e.Stream, Kind: e.Kind,
			Seal: e.Seal, Generation: e.Generation, TTL: recordstore.Duration(e.TTL)}, Values: e.Rows}
		if e.Op == recordstore.OpTrim {
			before := e.Before
			de.Before = &before
		}
		d.Entries[i] = de
	}
	return d
}
