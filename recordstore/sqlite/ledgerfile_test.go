// Specs of ledger files (KeepLedger) and of looking a batch up in the
// ledgers of closed files (LedgerOutcome).

package sqlite_test

import (
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Ledger files", func() {
	It("keep the outcome of a sealed file's batches, for LedgerOutcome and for the next file to carry", func() {
		w := newWorker()
		k := eventsKind()
		first, second, keeper := w.file("1"), w.file("2"), w.path+".ledger"
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		batch := newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"}))
		want := mustBatch(b1, batch)[0]
		epoch1 := b1.Epoch()

		// While the file is live, its ledger answers, read-only.
		got, err := sqlite.LedgerOutcome(ctx, []string{first, keeper}, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))

		Expect(b1.Close()).To(Succeed())
		Expect(sqlite.KeepLedger(ctx, keeper, first, time.Time{})).To(Succeed())
		fi, err := os.Stat(keeper)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		_, err = sqlite.Seal(ctx, first, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Remove(first)).To(Succeed()) // moved away

		got, err = sqlite.LedgerOutcome(ctx, []string{first, keeper}, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want), "the ledger file answers once the file is sealed and gone")
		_, err = sqlite.LedgerOutcome(ctx, []string{first, keeper}, "batch-none")
		Expect(err).To(MatchError(recordstore.ErrNotFound))

		b2 := openAt(w.path, sqlite.Options{LiveFile: second, CarryFrom: []string{first, keeper}})
		Expect(b2.Epoch()).To(BeNumerically(">", epoch1), "the epoch continues above the kept one")
		declare(b2, k)
		Expect(mustBatch(b2, batch)[0]).To(Equal(want), "the recorded result, not a second application")
		Expect(fileCount(second, `SELECT count(*) FROM events`)).To(BeZero())
	})

	It("keep the newer row of a batch, and drop rows older than the given time", func() {
		w := newWorker()
		k := eventsKind()
		clk := newClock()
		first, keeper := w.file("1"), w.path+".ledger"
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1, Now: clk.Now})
		Expect(err).NotTo(HaveOccurred())
		old := newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"}))
		mustBatch(b1, old)
		Expect(sqlite.KeepLedger(ctx, keeper, first, time.Time{})).To(Succeed())
		clk.Advance(time.Hour)
		recent := newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "b"}))
		want := mustBatch(b1, recent)[0]
		Expect(b1.Close()).To(Succeed())

		Expect(sqlite.KeepLedger(ctx, keeper, first, clk.Now().Add(-time.Minute))).To(Succeed())
		_, err = sqlite.LedgerOutcome(ctx, []string{keeper}, old.ID)
		Expect(err).To(MatchError(recordstore.ErrNotFound), "ingested before the drop time")
		got, err := sqlite.LedgerOutcome(ctx, []string{keeper}, recent.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	})

	It("copy nothing from a missing, empty or sealed file", func() {
		w := newWorker()
		keeper := w.path + ".ledger"
		Expect(os.MkdirAll(w.dir, 0o700)).To(Succeed())
		empty := w.file("empty")
		Expect(os.WriteFile(empty, nil, 0o600)).To(Succeed())
		for _, f := range []string{w.file("missing"), empty} {
			Expect(sqlite.KeepLedger(ctx, keeper, f, time.Time{})).To(Succeed())
		}
		Expect(fileCount(keeper, `SELECT count(*) FROM record_spool_batches`)).To(BeZero())
		_, err := sqlite.LedgerOutcome(ctx, []string{w.file("missing"), empty, keeper}, "batch-x")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
	})
})
