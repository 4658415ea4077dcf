// The bytes of manifest format 1 as this build writes them, pinned by
// files in testdata/manifest: other implementations read them, so a change
// of the Go types behind a manifest must not change one byte.

package spool_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// pinnedBatch returns a batch with one entry of every op, fixed ids and
// clock, and the given producer details.
func pinnedBatch(pid int, host, build string) *recordstore.Batch {
	kind := keyed()
	before := time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC)
	return &recordstore.Batch{
		ID:       "698658ae4541d8f864e402e7308c97bf",
		Producer: recordstore.Producer{Instance: "3f9c2a7d51e04b88", Seq: 7, PID: pid, Host: host, Build: build},
		Created:  time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC),
		Schemas:  []recordstore.Kind{*kind},
		Entries: []recordstore.BatchEntry{
			{Op: recordstore.OpAppend, Stream: "s1", Kind: "kv", Seal: true, Generation: 2,
				Rows: normalizeAll(kind, []recordstore.Row{{"k": "a", "v": 1}, {"k": "b"}})},
			{Op: recordstore.OpAppend, Stream: "s2", Kind: "kv"},
			{Op: recordstore.OpSeal, Stream: "s1"},
			{Op: recordstore.OpExpire, Stream: "s1", TTL: 36 * time.Hour},
			{Op: recordstore.OpTrim, Stream: "s3", Before: before},
			{Op: recordstore.OpDelete, Stream: "s4"},
			{Op: recordstore.OpReopen, Stream: "s5", Generation: 3},
			{Op: recordstore.OpDeclare, Kind: "kv"},
		},
	}
}

var _ = Describe("the bytes of a manifest", func() {
	DescribeTable("are exactly the pinned format 1 document",
		func(del *recordstore.Batch, golden string) {
			ctx := context.Background()
			d := newDir(spool.Options{})
			name, err := d.Publish(ctx, del, spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			got, err := os.ReadFile(filepath.Join(d.Path(spool.StateIncoming, name.String()), spool.ManifestFile))
			Expect(err).NotTo(HaveOccurred())
			path := filepath.Join("testdata", "manifest", golden)
			if os.Getenv("SPOOL_WRITE_GOLDEN") != "" {
				Expect(os.WriteFile(path, got, 0o644)).To(Succeed())
			}
			want, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(string(want)))

			// Decoding the document and encoding it again gives it back.
			m, err := spool.DecodeManifest(want)
			Expect(err).NotTo(HaveOccurred())
			again, err := m.Encode()
			Expect(err).NotTo(HaveOccurred())
			Expect(string(again)).To(Equal(string(want)))
		},
		Entry("with every op and a full producer", pinnedBatch(4242, "worker-7", "v1.4.0"), "every-op.json"),
		Entry("with a producer whose advisory fields are empty (still written)", pinnedBatch(0, "", ""), "bare-producer.json"),
	)
})
