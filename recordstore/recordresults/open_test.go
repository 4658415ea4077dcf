// Specs for Open's refusals: what it refuses creates nothing.

package recordresults_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

var _ = Describe("Open", func() {
	DescribeTable("refuses, creating nothing,",
		func(name string, opts recordresults.Options, says string) {
			dir := GinkgoT().TempDir()
			st, err := recordresults.Open(context.Background(), filepath.Join(dir, name), opts)
			if st != nil {
				DeferCleanup(st.Close)
			}
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(says)))
			left, rerr := os.ReadDir(dir)
			Expect(rerr).NotTo(HaveOccurred())
			Expect(left).To(BeEmpty(), "no lock, spool or live file")
		},
		Entry("a path named like SQLite's own files", "x.sqlite-wal", recordresults.Options{}, "SQLite's own"),
		Entry("a spool format no codec is registered for", "records.sqlite", recordresults.Options{Format: "csv"}, `unknown codec "csv"`),
	)
})
