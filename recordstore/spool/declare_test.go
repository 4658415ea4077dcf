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
		del := &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now().UTC(),
			Schemas: []recordstore.Kind{*allTypes()},
			Entries: []recordstore.BatchEntry{{Op: recordstore.OpDeclare, Kind: "all"}}}
		name, err := d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries).To(HaveLen(1))
		Expect(got.Entries[0].Op).To(Equal(recordstore.OpDeclare))
		Expect(got.Entries[0].Kind).To(Equal("all"))
	})

	DescribeTable("are refused with anything else on them",
		func(e spool.Entry) {
			id := spool.NewIdentity("")
			m := spool.Manifest{Format: 1, ID: spool.NewID(), Producer: id.Producer(1), Created: time.Now().UTC(),
				Schemas: []recordstore.Kind{*allTypes()}, Entries: []spool.Entry{e}}
			Expect(m.Validate()).To(MatchError(spool.ErrBadManifest))
		},
		Entry("an unknown kind", spool.Entry{Op: recordstore.OpDeclare, Kind: "nope"}),
		Entry("a stream", spool.Entry{Op: recordstore.OpDeclare, Kind: "all", Stream: "s1"}),
		Entry("a seal flag", spool.Entry{Op: recordstore.OpDeclare, Kind: "all", Seal: true}),
		Entry("rows", spool.Entry{Op: recordstore.OpDeclare, Kind: "all", Rows: 1}),
	)

	// A batch carries the schema of the kind it appends to, which may be
	// one an earlier build stored under looser rules: such a schema
	// decodes, and the owner, which has the catalog, refuses it (invalid)
	// unless it is the stored kind as it is. Only a retention ttl that is
	// a number, which no build ever stored, is refused here.
	DescribeTable("whose schema breaks a rule of a new declaration",
		func(schema, says string) {
			id := spool.NewIdentity("")
			m := spool.Manifest{Format: 1, ID: spool.NewID(), Producer: id.Producer(1), Created: time.Now().UTC(),
				Schemas: []recordstore.Kind{*allTypes()}, Entries: []spool.Entry{{Op: recordstore.OpDeclare, Kind: "all"}}}
			data, err := m.Encode()
			Expect(err).NotTo(HaveOccurred())
			var doc map[string]any
			Expect(json.Unmarshal(data, &doc)).To(Succeed())
			var k any
			Expect(json.Unmarshal([]byte(schema), &k)).To(Succeed())
			doc["schemas"] = []any{k}
			data, err = json.Marshal(doc)
			Expect(err).NotTo(HaveOccurred())
			got, err := spool.DecodeManifest(data)
			if says == "" {
				Expect(err).NotTo(HaveOccurred(), "left to the owner")
				Expect(got.Schemas).To(HaveLen(1))
				return
			}
			Expect(err).To(MatchError(spool.ErrBadManifest))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err.Error()).To(ContainSubstring(says))
		},
		Entry("a bare-number ttl is refused when the manifest is decoded, as invalid",
			`{"name":"all","columns":[{"name":"a","type":"string"}],"retention":{"mode":"stream","ttl":86400}}`, `ttl 86400: want text like "24h"`),
		Entry("a ttl below a second decodes", `{"name":"all","columns":[{"name":"a","type":"string"}],"retention":{"mode":"rows","ttl":"999ms"}}`, ""),
		Entry("a json key column decodes", `{"name":"all","columns":[{"name":"a","type":"json"}],"key":["a"]}`, ""),
		Entry("an lww version that is a key column decodes",
			`{"name":"all","columns":[{"name":"a","type":"string"},{"name":"v","type":"integer"}],"key":["a","v"],"onConflict":"lww","lww":{"version":"v"}}`, ""),
		Entry("more columns than SQLite allows decodes", wideSchema(recordstore.MaxColumns+1), ""),
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
