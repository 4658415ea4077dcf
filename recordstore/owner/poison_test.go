// Specs for a batch whose producer's last seq the ledger cannot tell: it is
// held, not applied out of order.

package owner_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// hwBackend is the SQLite backend whose ProducerSeq fails while fail is
// set, as a ledger read would on an I/O error.
type hwBackend struct {
	*sqlite.Backend
	fail  *atomic.Bool
	reads *atomic.Int32 // failed reads
}

func (h *hwBackend) ProducerSeq(ctx context.Context, instance string) (int64, error) {
	if h.fail.Load() {
		h.reads.Add(1)
		return 0, errors.New("read ledger: disk I/O error")
	}
	return h.Backend.ProducerSeq(ctx, instance)
}

var _ = Describe("a batch whose producer's last seq the ledger cannot tell", func() {
	It("is held, and applied in order once the ledger answers", func(ctx SpecContext) {
		path := storePath()
		id := spool.NewIdentity("hand")
		first := handBatchAs(path, id, 1, spool.StateIncoming, "s", []recordstore.Row{{"k": "one"}}, nil)
		s1, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{Path: path, Open: sqliteOpener(path),
			CatalogVersion: sqlite.CatalogVersion, PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() recordstore.BatchOutcome { return outcome(s1, first) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))
		Expect(s1.Close()).To(Succeed())

		// A new owner, which has not read the producer's last seq yet,
		// finds seq 3 while the ledger cannot be read.
		third := handBatchAs(path, id, 3, spool.StateIncoming, "s", []recordstore.Row{{"k": "three"}}, nil)
		var fail atomic.Bool
		var reads atomic.Int32
		fail.Store(true)
		s, err := owner.Open(ctx, owner.Options[*hwBackend]{Path: path, CatalogVersion: sqlite.CatalogVersion,
			PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond, GapWait: 10 * time.Minute,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*hwBackend, error) {
				b, err := sqliteOpener(path)(ctx, readOnly, submit)
				if err != nil {
					return nil, err
				}
				return &hwBackend{Backend: b, fail: &fail, reads: &reads}, nil
			}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Eventually(reads.Load, wait, 5*time.Millisecond).Should(BeNumerically(">=", 3), "read again at later drains")
		res, err := s.Backend().BatchOutcome(ctx, third.ID)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "seq 3 not applied: %v %v", res, err)
		Expect(incoming(path)).To(ContainElement(third))

		fail.Store(false)
		second := handBatchAs(path, id, 2, spool.StateIncoming, "s", []recordstore.Row{{"k": "two"}}, nil)
		Eventually(func() recordstore.BatchOutcome {
			res, err := s.Backend().BatchOutcome(ctx, third.ID)
			if err != nil {
				return ""
			}
			return res.Outcome
		}, wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted))
		recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		keys := []string{}
		for _, r := range recs {
			keys = append(keys, r.Values["k"].(string))
		}
		Expect(keys).To(Equal([]string{"one", "two", "three"}), "in the producer's order; seq 2 is %s", second)
	})
})
