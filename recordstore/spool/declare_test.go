// Declare-only batches: how a read-only process declares a kind.

package spool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

	// A manifest another implementation wrote is checked as strictly as
	// a declaration here: its owner refuses the batch as invalid (and
	// moves it to failed/) instead of failing inside SQLite.
	DescribeTable("whose schema breaks a declaration rule are refused when the manifest is decoded, as invalid",
		func(schema, says string) {
			id := spool.NewIdentity("")
			m := spool.Manifest{Format: 1, ID: spool.NewID(), Producer: id.Producer(1), Created: time.Now().UTC(),
				Schemas: []recordstore.Kind{*allTypes()}, Entries: []spool.Entry{{Op: spool.OpDeclare, Kind: "all"}}}
			data, err := m.Encode()
			Expect(err).NotTo(HaveOccurred())
			var doc map[string]any
			Expect(json.Unmarshal(data, &doc)).To(Succeed())
			var k any
			Expect(json.Unmarshal([]byte(schema), &k)).To(Succeed())
			doc["schemas"] = []any{k}
			data, err = json.Marshal(doc)
			Expect(err).NotTo(HaveOccurred())
			_, err = spool.DecodeManifest(data)
			Expect(err).To(MatchError(spool.ErrBadManifest))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err.Error()).To(ContainSubstring(says))
		},
		Entry("a bare-number ttl", `{"name":"all","columns":[{"name":"a","type":"string"}],"retention":{"mode":"stream","ttl":86400}}`,
			`ttl 86400: want text like "24h"`),
		Entry("a ttl below a second", `{"name":"all","columns":[{"name":"a","type":"string"}],"retention":{"mode":"rows","ttl":"999ms"}}`,
			"want at least 1s"),
		Entry("a json key column", `{"name":"all","columns":[{"name":"a","type":"json"}],"key":["a"]}`, "key column a is json"),
		Entry("an lww version that is a key column",
			`{"name":"all","columns":[{"name":"a","type":"string"},{"name":"v","type":"integer"}],"key":["a","v"],"onConflict":"lww","lww":{"version":"v"}}`,
			"lww.version v is a key column"),
		Entry("more columns than SQLite allows", wideSchema(recordstore.MaxColumns+1), "1999 columns"),
	)
})

// wideSchema is the JSON of kind "all" with n string columns.
func wideSchema(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf(`{"name":"c%d","type":"string"}`, i)
	}
	return `{"name":"all","columns":[` + strings.Join(cols, ",") + `]}`
}
