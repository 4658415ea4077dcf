// Batch specs: group commit (many batches in one call, each with its own
// outcome) and entries whose rows stream from a RowSource.

package recordstoretest

import (
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *batchSuite) describeBatchGroups() {
	Describe("group commit", func() {
		It("gives every batch of a call its own outcome: a failed or refused one undoes none of the others", func() {
			s.append("closed", "event", events(1, 1)...)
			_, err := s.b.Seal(s.ctx, "closed")
			Expect(err).NotTo(HaveOccurred())
			var batches []recordstore.Batch
			for i := 0; i < 30; i++ {
				e := s.eventEntry(fmt.Sprintf("s%d", i%3), i, 1)
				if i == 17 {
					e = s.eventEntry("closed", i, 1)
				}
				batches = append(batches, s.newBatch(e))
			}
			batches[5].Failure = &recordstore.BatchError{Code: "invalid", Message: "poison"}
			res := s.apply(batches...)
			for i, r := range res {
				switch i {
				case 5:
					Expect(r.Outcome).To(Equal(recordstore.OutcomeFailed), "batch %d", i)
				case 17:
					s.expectCommitted(r)
					Expect(entryCodes(r)).To(Equal([]string{"sealed"}), "batch %d", i)
				default:
					s.expectCommitted(r)
					Expect(entryCodes(r)).To(Equal([]string{""}), "batch %d", i)
				}
				Expect(s.outcome(r.ID)).To(Equal(r), "batch %d has its own record", i)
			}
			// s2 got batches 2, 5 (failed), 8, 11, 14, 17 (sealed), 20, 23, 26, 29.
			Expect(column(s.scan("s2"), "n")).To(Equal([]any{int64(2), int64(8), int64(11), int64(14),
				int64(20), int64(23), int64(26), int64(29)}))
			Expect(seqs(s.scan("s2"))).To(Equal(seqRange(1, 8)))
			Expect(s.meta("closed").Total).To(Equal(int64(1)))
			Expect(s.producerSeq(producer)).To(Equal(batches[29].Producer.Seq))
		})

		It("gives the results and the store that one call per batch gives", func() {
			one, err := s.h.Open(s.ctx, s.clock)
			Expect(err).NotTo(HaveOccurred(), "open a second backend")
			each := &suite{h: s.h, ctx: s.ctx, clock: s.clock, b: one, bind: s.bind}
			DeferCleanup(each.tearDown)
			if !s.bound() { // bound, the batches declare the kinds of their streams
				each.declare(eventKind(), itemKind(recordstore.ConflictSkip), itemKind(recordstore.ConflictReplace))
				s.declare(itemKind(recordstore.ConflictReplace))
			}
			for _, st := range []*suite{s.suite, each} {
				st.append("old", "event", events(1, 2)...)
			}
			s.clock.Advance(time.Minute)

			items := itemKind(recordstore.ConflictReplace)
			sealC := s.eventEntry("c", 2, 1)
			sealC.Seal = true
			fenced := s.eventEntry("b", 9, 1)
			fenced.Generation = 1
			bad := s.eventEntry("a", 100, 300)
			bad.Rows[299] = recordstore.Values{nil, "n is required"}
			var batches []recordstore.Batch
			add := func(entries ...recordstore.BatchEntry) *recordstore.Batch {
				b := s.newBatch(entries...)
				if !s.bound() {
					b.Schemas = append(b.Schemas, items)
				}
				batches = append(batches, b)
				return &batches[len(batches)-1]
			}
			add(s.eventEntry("a", 1, 1))
			add(s.eventEntry("a", 2, 1), s.eventEntry("b", 1, 1))
			add(bad)
			add(s.eventEntry("a", 3, 300))
			add(s.appendEntry("a", items, recordstore.Row{"id": "x"}))
			add(s.appendEntry("r", items, recordstore.Row{"id": "k", "v": 1}, recordstore.Row{"id": "j", "v": 1}))
			add(s.appendEntry("r", items, recordstore.Row{"id": "k", "v": 2}))
			add(recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: "old", Before: s.clock.Now()})
			add(s.eventEntry("old", 3, 1))
			add(s.eventEntry("c", 1, 1), sealC, s.eventEntry("c", 3, 1))
			add(recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "b"}, s.eventEntry("b", 2, 1))
			add(s.eventEntry("b", 3, 1), fenced)
			add(recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "a", TTL: time.Minute}, s.eventEntry("a", 4, 1))
			add(s.eventEntry("z", 1, 1)).Failure = &recordstore.BatchError{Code: "invalid", Message: "poison"}
			add(s.eventEntry("a", 5, 1))
			batches = append(batches, batches[1])

			together := s.apply(batches...)
			var apart []recordstore.BatchResult
			for _, batch := range batches {
				res, err := one.(recordstore.BatchAppender).AppendBatch(s.ctx, batch)
				Expect(err).NotTo(HaveOccurred())
				apart = append(apart, res...)
			}
			Expect(withoutEpochs(together)).To(Equal(withoutEpochs(apart)))
			Expect(s.snapshot()).To(Equal(each.snapshot()))

			By("the mix took every path")
			Expect(entryCodes(together[2])).To(Equal([]string{"invalid"}))
			Expect(entryCodes(together[4])).To(Equal([]string{"schema_conflict"}))
			Expect(appendOf(together[6].Entries[0]).Replaced).To(Equal(int64(1)))
			Expect(entryCodes(together[9])).To(Equal([]string{"", "", "sealed"}))
			Expect(entryCodes(together[11])).To(Equal([]string{"", "not_found"}))
			Expect(together[13].Outcome).To(Equal(recordstore.OutcomeFailed))
		})
	})
}

func (s *batchSuite) describeBatchSources() {
	Describe("row sources", func() {
		DescribeTable("stores a source's rows as the same Rows, reading each row once and then the end",
			func(n int) {
				vals := normalized(eventKind(), events(1, n)...)
				src := newRowSource(vals)
				res := s.apply(
					s.newBatch(s.sourceEntry("streamed", src)),
					s.newBatch(recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "plain", Kind: s.kindAt("event", "plain"), Rows: vals}))
				s.expectCommitted(res[0])
				Expect(res[0].Entries[0].Append).To(Equal(&recordstore.AppendResult{Stream: "streamed", Kind: s.ev("streamed"),
					From: 1, To: int64(n), Appended: int64(n)}))
				Expect(src.reads).To(Equal(n + 1))
				Expect(jsonText(s.scan("streamed"))).To(Equal(jsonText(s.scan("plain"))))
			},
			Entry("no rows", 0),
			Entry("a few rows", 3),
			Entry("many rows", 3000),
		)

		DescribeTable("fails the batch whose source fails with a code, as if with Failure, and only that batch",
			func(n int, spoil func(*rowSource), code string) {
				s.append("first", "event", events(1, 1)...)
				src := newRowSource(normalized(eventKind(), events(1, n)...))
				spoil(src)
				good := s.newBatch(s.eventEntry("other", 1, 1))
				bad := s.newBatch(s.eventEntry("first", 2, 1), s.sourceEntry("second", src))
				after := s.newBatch(s.eventEntry("first", 3, 1))
				res := s.apply(good, bad, after)

				s.expectCommitted(res[0])
				Expect(res[1].Outcome).To(Equal(recordstore.OutcomeFailed))
				Expect(res[1].Entries).To(BeEmpty())
				Expect(res[1].Error).NotTo(BeNil())
				Expect(res[1].Error.Code).To(Equal(code))
				Expect(res[1].Err()).To(MatchError(recordstore.SentinelForCode(code)))
				s.expectCommitted(res[2])
				Expect(appendOf(res[2].Entries[0])).To(Equal(recordstore.AppendResult{Stream: "first", Kind: s.ev("first"), From: 2, To: 2, Appended: 1}),
					"the failed batch's first entry left no trace, not even in the stream's seqs")
				Expect(column(s.scan("first"), "n")).To(Equal([]any{int64(1), int64(3)}))
				Expect(s.scan("other")).To(HaveLen(1))
				_, err := s.b.Meta(s.ctx, "second")
				expectNotFound(err)
				Expect(s.outcome(bad.ID)).To(Equal(res[1]))

				By("a replay returns the recorded failure; a Retry with a sound source applies it")
				before := s.snapshot()
				Expect(s.apply(bad)).To(Equal(res[1:2]))
				s.expectUnchanged(before)
				bad.Retry = true
				bad.Entries[1].Source = newRowSource(normalized(eventKind(), events(1, 2)...))
				retried := s.applyOne(bad)
				s.expectCommitted(retried)
				Expect(entryCodes(retried)).To(Equal([]string{"", ""}))
				Expect(s.meta("second").Total).To(Equal(int64(2)))
			},
			Entry("a row that does not fit, midway through many", 2000, func(r *rowSource) {
				r.failAt, r.failErr = 1500, recordstore.Invalidf("row 1500 does not fit")
			}, "invalid"),
			Entry("a row that does not fit, among few", 3, func(r *rowSource) {
				r.failAt, r.failErr = 1, recordstore.Invalidf("row 1 does not fit")
			}, "invalid"),
			Entry("fewer rows than announced", 1000, func(r *rowSource) { r.announce = 1200 }, "invalid"),
			Entry("more rows than announced", 1000, func(r *rowSource) { r.announce = 999 }, "invalid"),
			Entry("rows announced, none there", 0, func(r *rowSource) { r.announce = 5 }, "invalid"),
			Entry("an error at the end", 300, func(r *rowSource) {
				r.failAt, r.failErr = 300, recordstore.Invalidf("row count mismatch at the end")
			}, "invalid"),
			Entry("an error with another code", 10, func(r *rowSource) {
				r.failAt, r.failErr = 4, recordstore.Errorf(recordstore.ErrSchemaConflict, "row 4 names an unknown column")
			}, "schema_conflict"),
		)

		It("fails the whole call on a source error without a code, committing nothing, and keeps applying", func() {
			src := newRowSource(normalized(eventKind(), events(1, 1000)...))
			src.failAt, src.failErr = 700, errors.New("read e00001.ndjson: input/output error")
			good := s.newBatch(s.eventEntry("other", 1, 1))
			bad := s.newBatch(s.sourceEntry("second", src))
			s.declareKindsOf(good, bad) // kinds declared by a failed call's schemas stay declared
			before := s.snapshot()
			_, err := s.appender().AppendBatch(s.ctx, good, bad)
			Expect(err).To(MatchError(ContainSubstring("input/output error")))
			Expect(recordstore.Code(err)).To(Equal(recordstore.CodeInternal))
			s.expectUnchanged(before)
			s.expectNoOutcome(good.ID)
			s.expectNoOutcome(bad.ID)

			bad.Entries[0].Source = newRowSource(normalized(eventKind(), events(1, 3)...))
			res := s.apply(good, bad)
			s.expectCommitted(res[0])
			s.expectCommitted(res[1])
			Expect(s.meta("second").Total).To(Equal(int64(3)))
		})

		DescribeTable("leaves the source of an entry refused before its rows unread",
			func(entry func(src recordstore.RowSource) recordstore.BatchEntry, schemas ...recordstore.Kind) {
				s.declareAt("k", itemKind(recordstore.ConflictReplace))
				s.append("s", "event", events(1, 1)...)
				src := newRowSource(normalized(eventKind(), events(1, 10)...))
				batch := s.newBatch(entry(src))
				for _, k := range schemas {
					batch.Schemas = withSchema(batch.Schemas, s.streamKind(k, "k"))
				}
				res := s.applyOne(batch)
				s.expectCommitted(res)
				Expect(entryCodes(res)[0]).NotTo(BeEmpty())
				Expect(src.reads).To(BeZero())
			},
			Entry("a fenced generation", func(src recordstore.RowSource) recordstore.BatchEntry {
				e := s.sourceEntry("s", src)
				e.Generation = 7
				return e
			}),
			Entry("a schema conflict", func(src recordstore.RowSource) recordstore.BatchEntry {
				return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "k", Kind: s.kindAt("item_replace", "k"), Source: src}
			}, changedItemKind(func(k *recordstore.Kind) { k.Key = []string{"v"} })),
		)
	})
}
