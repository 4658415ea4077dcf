// Specs for the role-aware bulk Writer: applied directly by an owner,
// spooled by a non-owner, in order across a promotion.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// openBeside opens the store in this process while a child owns it: a
// non-owner that promotes itself when the owner dies.
func openBeside(path string) *sqliteStore {
	GinkgoHelper()
	s := openInProcess(path, nil)
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	return s
}

// appendEach appends one row of key prefix-i per call, for i < n.
func appendEach(ctx context.Context, w *owner.Writer[*sqlite.Backend], stream, prefix string, n int) {
	GinkgoHelper()
	for i := range n {
		Expect(w.Append(ctx, stream, eventKind(), []recordstore.Row{{"k": fmt.Sprintf("%s-%d", prefix, i), "n": i}})).To(Succeed())
	}
}

// windows returns the [From, To] of each result's first entry.
func windows(results []recordstore.BatchResult) [][2]int64 {
	out := make([][2]int64, len(results))
	for i, r := range results {
		out[i] = [2]int64{r.Entries[0].Append.From, r.Entries[0].Append.To}
	}
	return out
}

var _ = Describe("the role-aware Writer", func() {
	It("applies batches directly while this process owns the store, cut at the caps, and returns their outcomes", func(ctx SpecContext) {
		path := storePath()
		s := openHere(path)
		w := s.NewWriter(spool.WriterOptions{MaxRows: 3})
		appendEach(ctx, w, "s", "own", 7)
		Expect(w.Seal(ctx, "s")).To(Succeed())
		results, err := w.Flush(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(windows(results)).To(Equal([][2]int64{{1, 3}, {4, 6}, {7, 7}}))
		Expect(results[2].Entries).To(HaveLen(2))
		Expect(results[2].Entries[1].Meta.Sealed).To(BeTrue(), "the seal follows the last append")
		for _, r := range results {
			Expect(r.Outcome).To(Equal(recordstore.OutcomeCommitted))
			out, err := s.Backend().BatchOutcome(ctx, r.ID)
			Expect(err).NotTo(HaveOccurred(), "each batch is in the ledger")
			Expect(out.Outcome).To(Equal(recordstore.OutcomeCommitted))
		}
		Expect(entries(path, spool.StateIncoming)).To(BeEmpty())
		Expect(entries(path, spool.StateTrash)).To(BeEmpty(), "nothing went through the spool")
		rows, n := w.Pending()
		Expect(rows).To(BeZero())
		Expect(n).To(BeZero())

		again, err := w.Flush(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeEmpty(), "outcomes are returned once")
	})

	It("delivers nothing once its Store is closed: ErrClosed, the rows still pending; nor does the Store publish or await", func(ctx SpecContext) {
		path := storePath()
		s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion})
		Expect(err).NotTo(HaveOccurred())
		w := s.NewWriter(spool.WriterOptions{})
		appendEach(ctx, w, "s", "late", 2)
		Expect(s.Close()).To(Succeed())

		_, err = w.Close(ctx)
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		rows, n := w.Pending()
		Expect(rows).To(BeEquivalentTo(2), "not delivered, so still pending")
		Expect(n).To(Equal(1))

		_, err = s.Publish(ctx, recordstore.Batch{Entries: []recordstore.BatchEntry{{Op: recordstore.OpDelete, Stream: "x"}}})
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		_, err = s.Await(ctx, spool.NewID())
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		_, err = s.Outcome(ctx, spool.NewID())
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		Expect(entries(path, spool.StateIncoming)).To(BeEmpty(), "nothing was published")

		reopened := openHere(path)
		_, err = reopened.Backend().Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "no row was applied: %v", err)
	})

	It("fails Await at once with the context's error when the context has ended, not as pending", func(ctx SpecContext) {
		s := openHere(storePath())
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := s.Await(done, spool.NewID())
		Expect(err).To(MatchError(context.Canceled))
		var pe *owner.PendingError
		Expect(errors.As(err, &pe)).To(BeFalse(), "a batch nobody published is not pending")
	})

	It("returns an entry's error, naming its batch, with the outcomes of the rest", func(ctx SpecContext) {
		path := storePath()
		s := openHere(path)
		w := s.NewWriter(spool.WriterOptions{})
		appendEach(ctx, w, "closed", "x", 1)
		Expect(w.Seal(ctx, "closed")).To(Succeed())
		_, err := w.Flush(ctx)
		Expect(err).NotTo(HaveOccurred())

		appendEach(ctx, w, "open", "y", 2)
		appendEach(ctx, w, "closed", "z", 1)
		results, err := w.Flush(ctx)
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(results[0].ID))
		Expect(results).To(HaveLen(1))
		Expect(results[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(results[0].Entries[0].Append.Appended).To(BeEquivalentTo(2), "the other entry was applied")
		Expect(errors.Is(results[0].Entries[1].Err(), recordstore.ErrSealed)).To(BeTrue())

		_, err = w.Close(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Append(ctx, "open", eventKind(), []recordstore.Row{{"k": "late"}})).To(MatchError(recordstore.ErrClosed))
	})

	It("spools as a non-owner and waits for the owner's outcomes", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		s := openBeside(path)
		w := s.NewWriter(spool.WriterOptions{MaxRows: 2})
		appendEach(ctx, w, "s", "far", 5)
		results, err := w.Flush(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(windows(results)).To(Equal([][2]int64{{1, 2}, {3, 4}, {5, 5}}))
		Eventually(func() []string { return entries(path, spool.StateTrash) }, wait, 10*time.Millisecond).
			Should(HaveLen(3), "the owner ingested three spooled batches")
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})

	It("keeps its batches in order across a promotion: those it spooled are applied before the ones it applies itself", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		s := openBeside(path)
		w := s.NewWriter(spool.WriterOptions{MaxRows: 1})
		Expect(own.Stop()).To(Succeed())     // the owner ingests nothing more
		appendEach(ctx, w, "s", "before", 3) // the first two are cut and published
		Expect(entries(path, spool.StateIncoming)).To(HaveLen(2))
		Expect(own.Kill()).To(Succeed())
		Eventually(s.Role, wait, 10*time.Millisecond).Should(Equal(owner.RoleOwner))
		appendEach(ctx, w, "s", "after", 2)
		results, err := w.Flush(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(windows(results)).To(Equal([][2]int64{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}}))
		Expect(streamKeys(s, "s")).To(Equal([]string{"before-0", "before-1", "before-2", "after-0", "after-1"}))
	})
})

// streamOps has a Writer append to streams "a" and "b", then append to
// "a" again, trim what "a" had before, seal, reopen and expire it, and
// delete "b"; it checks each outcome and what the store holds after.
func streamOps(ctx context.Context, s *sqliteStore) {
	GinkgoHelper()
	w := s.NewWriter(spool.WriterOptions{})
	appendEach(ctx, w, "a", "early", 2)
	appendEach(ctx, w, "b", "b", 1)
	_, err := w.Flush(ctx)
	Expect(err).NotTo(HaveOccurred())
	before, err := s.Backend().Meta(ctx, "a")
	Expect(err).NotTo(HaveOccurred())
	cut := time.Now()
	time.Sleep(20 * time.Millisecond) // the next append is stamped after cut

	appendEach(ctx, w, "a", "late", 1)
	Expect(w.Trim(ctx, "a", cut)).To(Succeed())
	Expect(w.Seal(ctx, "a")).To(Succeed())
	Expect(w.Reopen(ctx, "a", before.Generation)).To(Succeed())
	Expect(w.Expire(ctx, "a", time.Hour)).To(Succeed())
	Expect(w.Delete(ctx, "b")).To(Succeed())
	results, err := w.Flush(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(results).To(HaveLen(1), "one batch")
	var ops []recordstore.BatchOp
	for _, e := range results[0].Entries {
		Expect(e.Err()).NotTo(HaveOccurred(), "%s %s", e.Op, e.Stream)
		ops = append(ops, e.Op)
	}
	Expect(ops).To(Equal([]recordstore.BatchOp{recordstore.OpAppend, recordstore.OpTrim, recordstore.OpSeal,
		recordstore.OpReopen, recordstore.OpExpire, recordstore.OpDelete}))
	Expect(results[0].Entries[2].Meta.Sealed).To(BeTrue())

	Expect(streamKeys(s, "a")).To(Equal([]string{"late-0"}), "the trim dropped what came before it")
	m, err := s.Backend().Meta(ctx, "a")
	Expect(err).NotTo(HaveOccurred())
	Expect(m.Sealed).To(BeFalse(), "reopened after the seal")
	Expect(m.Generation).To(Equal(before.Generation))
	Expect([]int64{m.LowSeq, m.HighSeq}).To(Equal([]int64{3, 3}))
	Expect(m.ExpiresAt).NotTo(BeNil())
	Expect(*m.ExpiresAt).To(BeTemporally(">", cut.Add(59*time.Minute)))
	_, err = s.Backend().Meta(ctx, "b")
	Expect(err).To(MatchError(recordstore.ErrNotFound), "deleted")
}

var _ = Describe("the role-aware Writer's stream operations", func() {
	It("applies trim, seal, reopen, expire and delete in order while this process owns the store", func(ctx SpecContext) {
		streamOps(ctx, openHere(storePath()))
	})

	It("has the owner apply them in order when it spools them", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		streamOps(ctx, openBeside(path))
		// The applied folders leave incoming/ after the owner's next sync.
		Eventually(func() []string { return entries(path, spool.StateTrash) }, wait, 10*time.Millisecond).
			ShouldNot(BeEmpty(), "the batches went through the spool")
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})
})

var _ = Describe("the role-aware Writer across processes", Label("crash"), func() {
	It("keeps a producer child's batches exactly once and in order while the owner is SIGKILLed between its deliveries", func() {
		path := storePath()
		own := startOwner(path, fast(), nil)
		write := func(i int) rt.Step {
			return rt.Step{Op: rt.OpWrite, Name: fmt.Sprintf("write-%d", i), Stream: "s", Kind: "event", BatchRows: 10,
				Gen: &rt.Gen{Prefix: "w", From: i * 5, Count: 5}, Timeout: wait}
		}
		var steps []rt.Step
		for i := range 6 {
			steps = append(steps, write(i))
		}
		steps = append(steps, hold())
		for i := 6; i < 12; i++ {
			steps = append(steps, write(i))
		}
		steps = append(steps, rt.Step{Op: rt.OpFlush, Name: "flush", Timeout: wait}, scan("s").Named("scan"), closeStore())
		p := startProducer(path, fast(), nil, append([]rt.Step{hold()}, steps...)...)
		Expect(p.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		Expect(own.Stop()).To(Succeed()) // the owner ingests nothing more
		Expect(p.Release()).To(Succeed())
		p.MustStepNamed("write-5", wait) // then it holds: two batches of ten published, not applied, ten rows queued
		Expect(entries(path, spool.StateIncoming)).To(HaveLen(2))
		Expect(own.Kill()).To(Succeed())
		Expect(p.Release()).To(Succeed())

		var results []recordstore.BatchResult
		Expect(p.MustStepNamed("flush", wait).Decode(&results)).To(Succeed())
		Expect(windows(results)).To(Equal([][2]int64{{1, 10}, {11, 20}, {21, 30}, {31, 40}, {41, 50}, {51, 60}}))
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(60))
		for i, r := range recs {
			Expect(r["k"]).To(Equal(rt.GenKey("w", i)), "row %d in order", i)
		}
		p.MustFinish(wait)
		Expect(keyCounts(finalRows(path, "s"))).To(HaveLen(60), "each row once")
	})
})
