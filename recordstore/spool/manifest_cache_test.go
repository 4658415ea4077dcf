// Specs for DecodeManifest's schema cache: a manifest decodes the same
// whether its schemas are decoded or remembered, and no two callers share
// a schema.

package spool_test

import (
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("DecodeManifest's schema cache", func() {
	// manifest returns a valid manifest whose schema is schema.
	manifest := func(schema string) []byte {
		return []byte(`{"format":1,"id":"0123456789abcdef0123456789abcdef",` +
			`"producer":{"instance":"0123456789abcdef","seq":1,"pid":1,"host":"h","build":"b"},` +
			`"created":"2024-01-02T03:04:05Z","schemas":[` + schema + `],` +
			`"entries":[{"op":"append","stream":"s","kind":"kv","rows":0,"bytes":0}]}`)
	}
	const kv = `{"name":"kv","columns":[{"name":"k","type":"string"},{"name":"n","type":"integer"}],"key":["k"],"indexes":[["n"]]}`

	It("decodes a manifest the same the second time, and hands each caller its own schemas", func() {
		data := manifest(kv)
		first, err := spool.DecodeManifest(data)
		Expect(err).NotTo(HaveOccurred())
		second, err := spool.DecodeManifest(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(second).To(Equal(first))

		first.Schemas[0].Columns[0].Name = "changed"
		first.Schemas[0].Key[0] = "changed"
		first.Schemas[0].Indexes[0][0] = "changed"
		third, err := spool.DecodeManifest(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(third.Schemas).To(Equal(second.Schemas), "a caller's change reaches neither the cache nor others")
		second.Schemas[0].Columns[1].Name = "changed too"
		Expect(third.Schemas[0].Columns[1].Name).To(Equal("n"))
	})

	It("refuses a bad schema every time it sees it", func() {
		data := manifest(strings.Replace(kv, `"integer"`, `"int"`, 1)) // only the schema check sees it
		for range 2 {
			_, err := spool.DecodeManifest(data)
			Expect(errors.Is(err, spool.ErrBadManifest)).To(BeTrue(), "%v", err)
		}
	})

	It("still refuses a manifest whose other parts are bad when its schemas are known", func() {
		good := manifest(kv)
		_, err := spool.DecodeManifest(good)
		Expect(err).NotTo(HaveOccurred())
		bad := []byte(strings.Replace(string(good), `"kind":"kv"`, `"kind":"other"`, 1))
		_, err = spool.DecodeManifest(bad)
		Expect(errors.Is(err, spool.ErrBadManifest)).To(BeTrue(), "%v", err)
		unknown := []byte(strings.Replace(string(good), `"format":1,`, `"format":1,"extra":true,`, 1))
		_, err = spool.DecodeManifest(unknown)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
	})
})
