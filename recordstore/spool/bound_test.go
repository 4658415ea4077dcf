// A bound kind's schema in a manifest: its table binding (JSON "table")
// survives publish and load byte for byte.

package spool_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("a bound kind's schema", func() {
	It("round-trips through a published batch with its table binding", func(ctx context.Context) {
		k := recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "a", Type: recordstore.TypeString}},
			Table: &recordstore.BoundTable{Name: "events", DDL: []string{
				"CREATE TABLE IF NOT EXISTS events (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n    a TEXT\n);",
				"CREATE INDEX IF NOT EXISTS idx_a ON events(a);",
			}}}
		Expect(k.Validate()).To(Succeed())
		row, err := k.Normalize(recordstore.Row{"a": "x"})
		Expect(err).NotTo(HaveOccurred())
		d := newDir(spool.Options{})
		id := spool.NewIdentity("")
		for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz} {
			batch := &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now().UTC(),
				Schemas: []recordstore.Kind{k},
				Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "w", Kind: "ev", Rows: []recordstore.Values{row}}}}
			name, err := d.Publish(ctx, batch, format)
			Expect(err).NotTo(HaveOccurred())
			b, err := d.Load(ctx, spool.StateIncoming, name.String())
			Expect(err).NotTo(HaveOccurred())
			got, err := b.ReadAll(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Schemas).To(HaveLen(1))
			Expect(got.Schemas[0].Table).To(Equal(k.Table))
			Expect(got.Entries[0].Rows).To(Equal([]recordstore.Values{row}))
		}
	})

	It("makes a manifest bad when its DDL could do more than create its table", func() {
		k := recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "a", Type: recordstore.TypeString}},
			Table: &recordstore.BoundTable{Name: "events", DDL: []string{"CREATE TABLE events (a TEXT); DROP TABLE record_kinds"}}}
		id := spool.NewIdentity("")
		m := spool.Manifest{Format: 1, ID: spool.NewID(), Producer: id.Producer(1), Created: time.Now().UTC(),
			Schemas: []recordstore.Kind{k}, Entries: []spool.Entry{{Op: recordstore.OpDeclare, Kind: "ev"}}}
		err := m.Validate()
		Expect(err).To(MatchError(spool.ErrBadManifest))
		Expect(err.Error()).To(ContainSubstring("more than one statement"))
	})
})
