// Batch specs: a batch id is applied once, its result is recorded in the
// ledger and returned again for every later submission, across a reopen
// too; the ledger's lookups, producer seqs and sweeps.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *batchSuite) describeBatchOnce() {
	Describe("exactly once", func() {
		It("applies a new batch and records its result: committed, stamped with the clock, a result per entry", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 2))
			res := s.applyOne(batch)
			s.expectCommitted(res)
			Expect(res.Entries).To(Equal([]recordstore.EntryResult{{Op: recordstore.OpAppend, Stream: "s",
				Append: &recordstore.AppendResult{Stream: "s", Kind: s.ev("s"), From: 1, To: 2, Appended: 2}}}))
			Expect(column(s.scan("s"), "n")).To(Equal([]any{int64(1), int64(2)}))
			Expect(s.outcome(batch.ID)).To(Equal(res))
		})

		DescribeTable("returns the recorded result for an id it applied before and changes nothing, not even by its schemas",
			func(seqRaise int64, schema recordstore.Kind) {
				batch := s.newBatch(s.eventEntry("s", 1, 2))
				res := s.applyOne(batch)
				s.clock.Advance(time.Minute)
				before := s.snapshot()
				batch.Producer.Seq += seqRaise
				batch.Schemas = withSchema(batch.Schemas, s.streamKind(schema, "s"))
				Expect(s.apply(batch)).To(Equal([]recordstore.BatchResult{res}))
				s.expectUnchanged(before)
				Expect(s.outcome(batch.ID)).To(Equal(res), "the record still reads as at the first application")
			},
			Entry("sent again as it was, with a new kind", int64(0), allTypesKind()),
			Entry("sent again under a higher producer seq, with a new kind", int64(1000), allTypesKind()),
			Entry("sent again under a higher producer seq, with a kind widened by a column", int64(1000), widenedEventKind()),
		)

		It("goes by the id alone: other entries under a recorded id, even with a higher producer seq, are not applied", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			res := s.applyOne(batch)
			s.expectCommitted(s.applyOne(s.newBatch(s.eventEntry("s", 2, 1))))

			reused := s.newBatch(s.eventEntry("s", 100, 5), recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s"})
			reused.ID = batch.ID
			before := s.snapshot()
			Expect(s.applyOne(reused)).To(Equal(res))
			s.expectUnchanged(before)

			By("the producer's next batch is applied as usual")
			next := s.applyOne(s.newBatch(s.eventEntry("s", 3, 1)))
			s.expectCommitted(next)
			Expect(appendOf(next.Entries[0])).To(Equal(recordstore.AppendResult{Stream: "s", Kind: s.ev("s"), From: 3, To: 3, Appended: 1}))
		})

		It("applies an id repeated in one call once, giving every occurrence the first one's result", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			other := s.newBatch(s.eventEntry("s", 2, 1))
			res := s.apply(batch, other, batch)
			Expect(res[2]).To(Equal(res[0]))
			Expect(appendOf(res[1].Entries[0]).From).To(Equal(int64(2)))
			Expect(column(s.scan("s"), "n")).To(Equal([]any{int64(1), int64(2)}))
		})

		It("keeps every record across a reopen: outcomes read the same and replays change nothing", func() {
			if s.h.Reopen == nil {
				Skip("the harness cannot reopen a store")
			}
			committed := s.newBatch(s.eventEntry("s", 1, 2))
			failed := s.newBatch(s.eventEntry("t", 1, 1))
			failed.Failure = &recordstore.BatchError{Code: "invalid", Message: "line 1: not JSON"}
			res := s.apply(committed, failed)
			s.clock.Advance(time.Hour)
			s.reopenStore()

			Expect(s.outcome(committed.ID)).To(Equal(res[0]))
			Expect(s.outcome(failed.ID)).To(Equal(res[1]))
			Expect(s.producerSeq(producer)).To(Equal(failed.Producer.Seq))
			before := s.snapshot()
			Expect(s.apply(committed, failed)).To(Equal(res))
			s.expectUnchanged(before)

			By("a new batch is applied after the reopen, by the new writer")
			next := s.applyOne(s.newBatch(s.eventEntry("s", 3, 1)))
			s.expectCommitted(next)
			Expect(appendOf(next.Entries[0]).From).To(Equal(int64(3)))
		})
	})
}

func (s *batchSuite) describeBatchLedger() {
	Describe("the ledger", func() {
		It("answers ErrNotFound for a batch it never applied, and seq 0 for a producer it never saw", func() {
			s.expectNoOutcome("never")
			Expect(s.producerSeq(producer)).To(BeZero())
			s.applyOne(s.newBatch(s.eventEntry("s", 1, 1)))
			s.expectNoOutcome("never")
			Expect(s.producerSeq("fedcba9876543210")).To(BeZero())
		})

		It("gives each producer instance the highest seq it applied, failed batches included, in whatever order they come", func() {
			high := s.newBatch(s.eventEntry("s", 1, 1))
			high.Producer.Seq = 9
			low := s.newBatch(s.eventEntry("s", 2, 1))
			low.Producer.Seq = 4
			s.expectCommitted(s.applyOne(high))
			res := s.applyOne(low)
			s.expectCommitted(res)
			Expect(appendOf(res.Entries[0]).From).To(Equal(int64(2)), "a lower seq under a new id is a new batch")
			Expect(s.producerSeq(producer)).To(Equal(int64(9)))

			other := s.newBatch(s.eventEntry("s", 3, 1))
			other.Producer = recordstore.Producer{Instance: "fedcba9876543210", Seq: 2}
			failed := s.newBatch(s.eventEntry("s", 4, 1))
			failed.Producer.Seq = 12
			failed.Failure = &recordstore.BatchError{Code: "invalid", Message: "bad data"}
			s.apply(other, failed)
			Expect(s.producerSeq("fedcba9876543210")).To(Equal(int64(2)))
			Expect(s.producerSeq(producer)).To(Equal(int64(12)))
		})

		It("sweeps the records ingested before a time, and only them, leaving the data", func() {
			first := s.newBatch(s.eventEntry("s", 1, 1))
			s.applyOne(first)
			s.clock.Advance(time.Hour)
			second := s.newBatch(s.eventEntry("s", 2, 1))
			kept := s.applyOne(second)
			before := s.snapshot()

			n, err := s.appender().SweepBatches(s.ctx, s.clock.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(int64(1)), "a record ingested exactly at the cut-off is kept")
			s.expectNoOutcome(first.ID)
			Expect(s.outcome(second.ID)).To(Equal(kept))
			s.expectUnchanged(before)

			n, err = s.appender().SweepBatches(s.ctx, s.clock.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(BeZero())
		})

		It("refuses a call with a batch without an id with ErrInvalid, and applies none of its batches", func() {
			good := s.newBatch(s.eventEntry("s", 1, 1))
			noID := s.newBatch(s.eventEntry("t", 1, 1))
			noID.ID = ""
			before := s.snapshot()
			_, err := s.appender().AppendBatch(s.ctx, good, noID)
			expectRefused(err, recordstore.ErrInvalid, "invalid")
			s.expectUnchanged(before)
			s.expectNoOutcome(good.ID)
		})

		It("answers an empty call with no results", func() {
			res, err := s.appender().AppendBatch(s.ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(res).To(BeEmpty())
		})

		It("fails every ledger call with ErrClosed after Close", func() {
			ba := s.appender()
			Expect(s.b.Close()).To(Succeed())
			s.closed = true
			_, err := ba.AppendBatch(s.ctx, s.newBatch(s.eventEntry("s", 1, 1)))
			expectRefused(err, recordstore.ErrClosed, "closed")
			_, err = ba.BatchOutcome(s.ctx, "any")
			expectRefused(err, recordstore.ErrClosed, "closed")
			_, err = ba.ProducerSeq(s.ctx, producer)
			expectRefused(err, recordstore.ErrClosed, "closed")
			_, err = ba.SweepBatches(s.ctx, s.clock.Now())
			expectRefused(err, recordstore.ErrClosed, "closed")
		})
	})
}
