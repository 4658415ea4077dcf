// Declare-only batches: how a read-only process declares a kind.

package spool_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("declare entries", func() {
	It("publish and load with only their kind", func(ctx context.Context) {
		d := newDir(spool.Options{})
		id := spool.NewIdentity("")
		del := &spool.Delivery{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now().UTC(),
			Schemas: []recordstore.Kind{*allTypes()},
			Entries: []spool.DeliveryEntry{{Entry: spool.Entry{Op: spool.OpDeclare, Kind: "all"}}}}
		name, err := d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries).To(HaveLen(1))
		Expect(got.Entries[0].Op).To(Equal(spool.OpDeclare))
		Expect(got.Entries[0].Kind).To(Equal("all"))
	})

	DescribeTable("are refused with anything else on them",
		func(e spool.Entry) {
			id := spool.NewIdentity("")
			m := spool.Manifest{Format: 1, ID: spool.NewID(), Producer: id.Producer(1), Created: time.Now().UTC(),
				Schemas: []recordstore.Kind{*allTypes()}, Entries: []spool.Entry{e}}
			Expect(m.Validate()).To(MatchError(spool.ErrBadManifest))
		},
		Entry("an unknown kind", spool.Entry{Op: spool.OpDeclare, Kind: "nope"}),
		Entry("a stream", spool.Entry{Op: spool.OpDeclare, Kind: "all", Stream: "s1"}),
		Entry("a seal flag", spool.Entry{Op: spool.OpDeclare, Kind: "all", Seal: true}),
		Entry("rows", spool.Entry{Op: spool.OpDeclare, Kind: "all", Rows: 1}),
	)
})
