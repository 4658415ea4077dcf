// Specs for a producer's order: a batch whose predecessor is missing
// waits, up to GapWait, unless the predecessor is in failed/.

package owner_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// openInProcess opens the store in this process, polling fast, with the
// options set changes; it is closed when the spec ends.
func openInProcess(path string, set func(o *owner.Options[*sqlite.Backend])) *sqliteStore {
	GinkgoHelper()
	o := owner.Options[*sqlite.Backend]{
		Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond, StartWait: wait,
	}
	if set != nil {
		set(&o)
	}
	s, err := owner.Open(context.Background(), o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	return s
}

// openOrdered opens the store here as owner with gapWait.
func openOrdered(path string, gapWait time.Duration) *sqliteStore {
	GinkgoHelper()
	s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.GapWait = gapWait })
	Expect(s.Role()).To(Equal(owner.RoleOwner))
	return s
}

// outcome returns the ledger's outcome of batch n ("" while it has none).
func outcome(s *sqliteStore, n spool.BatchName) recordstore.BatchOutcome {
	GinkgoHelper()
	res, err := s.Backend().BatchOutcome(context.Background(), n.ID)
	if errors.Is(err, recordstore.ErrNotFound) {
		return ""
	}
	Expect(err).NotTo(HaveOccurred())
	return res.Outcome
}

// streamKeys returns the k column of stream's rows, in seq order.
func streamKeys(s *sqliteStore, stream string) []string {
	GinkgoHelper()
	recs, err := s.Backend().Scan(context.Background(), stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i], _ = r.Values["k"].(string)
	}
	return out
}

var _ = Describe("a producer's order", func() {
	It("holds a batch back while its predecessor is missing, applies it after GapWait, and the late predecessor after it", func() {
		path := storePath()
		s := openOrdered(path, 2*time.Second)
		id := spool.NewIdentity("hand")
		first := handBatchAs(path, id, 1, spool.StateIncoming, "s", []recordstore.Row{{"k": "one"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, first) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))

		third := handBatchAs(path, id, 3, spool.StateIncoming, "s", []recordstore.Row{{"k": "three"}}, nil)
		other := handBatch(path, "s", []recordstore.Row{{"k": "another producer"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, other) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted), "another producer is not held back")
		Consistently(func() recordstore.BatchOutcome { return outcome(s, third) }, 500*time.Millisecond, 20*time.Millisecond).
			Should(BeEmpty(), "seq 3 waits for seq 2")
		st, err := s.Status(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Backlog).To(Equal(1), "the held batch is backlog")

		Eventually(func() recordstore.BatchOutcome { return outcome(s, third) }, wait, 10*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted), "applied once the gap was waited out")
		second := handBatchAs(path, id, 2, spool.StateIncoming, "s", []recordstore.Row{{"k": "two"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, second) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted), "a late predecessor is still applied, once")
		Expect(streamKeys(s, "s")).To(Equal([]string{"one", "another producer", "three", "two"}))
	})

	It("applies a batch at once when its predecessor is in failed/", func() {
		path := storePath()
		s := openOrdered(path, 10*time.Minute)
		id := spool.NewIdentity("hand")
		first := handBatchAs(path, id, 1, spool.StateIncoming, "s", []recordstore.Row{{"k": "one"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, first) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))
		// seq 2 reached failed/ without the ledger knowing (another
		// owner's doing, or an operator's).
		second := handBatchAs(path, id, 2, spool.StateFailed, "s", []recordstore.Row{{"k": "two"}}, nil)
		third := handBatchAs(path, id, 3, spool.StateIncoming, "s", []recordstore.Row{{"k": "three"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, third) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted), "well before the ten-minute GapWait")
		Expect(outcome(s, second)).To(BeEmpty())
		Expect(entries(path, spool.StateFailed)).To(ConsistOf(second.String()))
		Expect(streamKeys(s, "s")).To(Equal([]string{"one", "three"}))
	})
})
