// Specs for a bad batch whose entry is large enough to stream from its file
// (4,096 rows or more), in one group with good ones: refused as it is
// loaded (its SHA-256), or found bad only while it is applied (a row near
// its end). Either way the owner applies the good batches, none of the bad
// batch's rows, and sends it to failed/ with its waiter answered.

package owner_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// streamedRows is an entry large enough to be streamed by the owner.
const streamedRows = 5000

// keyed returns n rows of keys prefix-00000, prefix-00001, …
func keyed(prefix string, n int) []recordstore.Row {
	rows := make([]recordstore.Row, n)
	for i := range rows {
		rows[i] = recordstore.Row{"k": fmt.Sprintf("%s-%05d", prefix, i), "n": i}
	}
	return rows
}

// editLastLine changes the last line of the text of a batch's data file
// with edit.
func editLastLine(data []byte, edit func(line string) string) []byte {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	Expect(lines).To(HaveLen(streamedRows))
	lines[len(lines)-1] = edit(lines[len(lines)-1])
	return []byte(strings.Join(lines, "\n") + "\n")
}

// breakLastLine changes the last line of a batch folder's one data file
// with edit, leaving the manifest's size and SHA-256 as they were.
func breakLastLine(edit func(line string) string) func(dir string) {
	return func(dir string) {
		editData(dir, func(b []byte) []byte { return editLastLine(b, edit) })
	}
}

// breakLastRow is breakLastLine with the manifest's size and SHA-256
// rewritten to match, so that only the rows tell.
func breakLastRow(edit func(line string) string) func(dir string) {
	return func(dir string) {
		rewriteData(dir, func(b []byte) []byte { return editLastLine(b, edit) })
	}
}

var _ = Describe("a large bad batch among good ones", func() {
	DescribeTable("applies the good batches of its group and none of its rows, and fails it with its waiter answered",
		func(damage func(dir string), about string) {
			path := storePath()
			before := handBatch(path, "s", keyed("before", 2), nil)
			bad := handBatch(path, "s", keyed("bad", streamedRows), damage)
			after := handBatch(path, "s", keyed("after", 2), nil)

			// Opened after the batches are in incoming/: its first drain
			// takes the three in one group.
			s := openInProcess(path, nil)
			Expect(s.Role()).To(Equal(owner.RoleOwner))
			resp, err := ingestWait(s.Paths().Socket, bad, wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Results).To(HaveLen(1))
			Expect(resp.Results[0].Done).To(BeTrue())
			Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(resp.Results[0].Result.Error).NotTo(BeNil())
			Expect(strings.ToLower(resp.Results[0].Result.Error.Error())).To(ContainSubstring(about))

			expectFailed(path, bad, "invalid", about)
			Eventually(func() recordstore.BatchOutcome { return outcome(s, after) }, wait, 5*time.Millisecond).
				Should(Equal(recordstore.OutcomeCommitted))
			Expect(outcome(s, before)).To(Equal(recordstore.OutcomeCommitted))
			Expect(outcome(s, bad)).To(Equal(recordstore.OutcomeFailed), "the ledger records the failure")
			Expect(streamKeys(s, "s")).To(Equal([]string{"before-00000", "before-00001", "after-00000", "after-00001"}),
				"no row of the failed batch")
			m, err := s.Backend().Meta(context.Background(), "s")
			Expect(err).NotTo(HaveOccurred())
			Expect([]int64{m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 4}), "the failed batch took no seqs")
		},
		Entry("its data file does not match its SHA-256 (refused as it is loaded)", breakLastLine(func(l string) string {
			return strings.Replace(l, "bad-04999", "bad-0499X", 1)
		}), "checksum"),
		Entry("its last row does not fit the kind (found while it is applied)", breakLastRow(func(l string) string {
			return strings.Replace(l, `"n":4999`, `"n":"many"`, 1)
		}), "line 5000"),
	)
})
