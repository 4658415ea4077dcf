// Specs for the value rules at the owner: a batch written by another
// implementation, whose lines hold values the store's rules refuse, is
// refused whole when it is ingested.

package owner_test

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

// foreignBatch puts into the store's incoming folder an ndjson batch of
// the all-types kind whose data is the given text of two rows, with a
// manifest that matches it (rows, size and SHA-256), as another producer
// could write it.
func foreignBatch(path, text string) spool.BatchName {
	GinkgoHelper()
	ctx := context.Background()
	scratch, err := spool.OpenRoot(ctx, filepath.Join(GinkgoT().TempDir(), "scratch.spool"), spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	k := allTypesKind()
	Expect(k.Validate()).To(Succeed())
	d := &recordstore.Batch{ID: spool.NewID(), Created: time.Now(), Schemas: []recordstore.Kind{*k},
		Producer: spool.NewIdentity("foreign").Producer(1),
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: k.Name,
			Rows: []recordstore.Values{{"one", nil, nil, nil, nil, nil}, {"two", nil, nil, nil, nil, nil}}}}}
	name, err := scratch.Publish(ctx, d, spool.FormatNDJSON)
	Expect(err).NotTo(HaveOccurred())
	src := scratch.Path(spool.StateIncoming, name.String())
	rewriteData(src, func([]byte) []byte { return []byte(text) })
	spoolDir(path)
	Expect(os.Rename(src, filepath.Join(spool.PathFor(path), string(spool.StateIncoming), name.String()))).To(Succeed())
	return name
}

var _ = Describe("a foreign batch with values the store's rules refuse", func() {
	DescribeTable("goes to failed/ as invalid and stores none of its rows",
		func(line, about string) {
			path := storePath()
			bad := foreignBatch(path, `{"s":"fine"}`+"\n"+line+"\n")
			s := openInProcess(path, nil)
			expectFailed(path, bad, "invalid", about)
			_, err := s.Backend().Scan(context.Background(), "s", recordstore.ScanOptions{})
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		},
		Entry("a string that is not UTF-8", "{\"s\":\"a\xffb\"}", "not valid utf-8"),
		Entry("a lone surrogate escape in a string", `{"s":"\ud800"}`, "lone utf-16 surrogate"),
		Entry("json that is not UTF-8", "{\"j\":\"\xff\"}", "not valid utf-8"),
		Entry("a lone surrogate escape in json", `{"j":["\udfff"]}`, "lone utf-16 surrogate"),
		Entry("a column twice in the row", `{"i":1,"i":2}`, "appears twice"),
		Entry("a name twice in json", `{"j":{"k":{"a":1,"a":2}}}`, "appears twice"),
		Entry("1e-400 into an integer", `{"i":1e-400}`, "not an integer"),
		Entry("2^63 into an integer", `{"i":9223372036854775808}`, "outside int64"),
		Entry("a +24:00 offset", `{"t":"2024-01-02T03:04:05+24:00"}`, "offset out of range"),
		Entry("ten fractional digits", `{"t":"2024-01-02T03:04:05.1234567891Z"}`, "more than 9 fractional digits"),
	)
})
