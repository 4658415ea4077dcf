// Specs: keys and the conflict policies skip, replace and lww.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeConflicts() {
	Describe("keys and conflict policies", func() {
		s.describeSkip()
		s.describeReplace()
		s.describeLWW()

		DescribeTable("refuses a key repeated inside one append, whatever the policy",
			func(p recordstore.OnConflict) {
				s.requirePolicy(p)
				k := itemKind(p)
				if p == recordstore.ConflictLWW {
					k = lwwKind()
				}
				s.declare(k)
				s.append("dups", k.Name, row{"id": "a", "v": 1})
				before := s.snapshot()
				s.clock.Advance(time.Second)
				rows := []recordstore.Row{{"id": "b", "v": 1}, {"id": "c", "v": 2}, {"id": "b", "v": 3}}
				if p == recordstore.ConflictLWW {
					for i, r := range rows {
						r["ver"] = i
					}
				}
				_, err := s.b.Append(s.ctx, "dups", k.Name, rows)
				expectRefused(err, recordstore.ErrInvalid, "invalid")
				Expect(err).To(MatchError(ContainSubstring("rows 1 and 3")), "rows are counted from 1")
				s.expectUnchanged(before)
			},
			Entry("skip", recordstore.ConflictSkip),
			Entry("replace", recordstore.ConflictReplace),
			Entry("lww", recordstore.ConflictLWW),
		)
	})
}

func (s *suite) describeSkip() {
	Describe("skip", func() {
		BeforeEach(func() { s.declare(itemKind(recordstore.ConflictSkip)) })

		It("keeps the stored row and spends no seq on a skipped one", func() {
			s.append("items", "item_skip", row{"id": "a", "v": 1}, row{"id": "b", "v": 2})
			t1 := s.clock.Advance(time.Second)
			res := s.append("items", "item_skip", row{"id": "a", "v": 9}, row{"id": "c", "v": 3})
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "items", Kind: s.kindName("item_skip", "items"), From: 3, To: 3, Appended: 1, Skipped: 1}))
			recs := s.scan("items")
			Expect(seqs(recs)).To(Equal([]int64{1, 2, 3}))
			Expect(column(recs, "id")).To(Equal([]any{"a", "b", "c"}))
			Expect(column(recs, "v")).To(Equal([]any{int64(1), int64(2), int64(3)}))
			m := s.meta("items")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{3, 1, 3}))
			Expect(m.UpdatedAt).To(BeTemporally("==", t1))
		})

		It("changes nothing, not even updatedAt, when every row is skipped", func() {
			s.append("items", "item_skip", row{"id": "a", "v": 1}, row{"id": "b", "v": 2})
			before := s.snapshot()
			s.clock.Advance(time.Minute)
			res := s.append("items", "item_skip", row{"id": "b", "v": 7}, row{"id": "a", "v": 8})
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "items", Kind: s.kindName("item_skip", "items"), From: 3, To: 2, Skipped: 2}))
			s.expectUnchanged(before)
		})

		It("compares composite keys on every key column", func() {
			s.declare(recordstore.Kind{Name: "pair", Columns: []recordstore.Column{
				{Name: "tenant", Type: recordstore.TypeString},
				{Name: "n", Type: recordstore.TypeInteger},
				{Name: "v", Type: recordstore.TypeString},
			}, Key: []string{"tenant", "n"}})
			s.append("pairs", "pair", row{"tenant": "x", "n": 1}, row{"tenant": "x", "n": 2}, row{"tenant": "y", "n": 1})
			res := s.append("pairs", "pair", row{"tenant": "x", "n": 1, "v": "again"}, row{"tenant": "y", "n": 2})
			Expect([]int64{res.From, res.To, res.Appended, res.Skipped}).To(Equal([]int64{4, 4, 1, 1}))
			Expect(column(s.scan("pairs"), "v")).To(Equal([]any{nil, nil, nil, nil}))
		})

		It("matches keys by their normalized value", func() {
			s.declare(recordstore.Kind{Name: "at_key", Columns: []recordstore.Column{
				{Name: "at", Type: recordstore.TypeDatetime},
				{Name: "v", Type: recordstore.TypeInteger},
			}, Key: []string{"at"}})
			s.append("ticks", "at_key", row{"at": "2024-01-01T00:00:00Z", "v": 1})
			res := s.append("ticks", "at_key", row{"at": "2024-01-01T02:00:00.000+02:00", "v": 2},
				row{"at": time.Date(2024, 1, 1, 0, 0, 0, 1000, time.UTC), "v": 3})
			Expect([]int64{res.Appended, res.Skipped}).To(Equal([]int64{1, 1}))
			Expect(column(s.scan("ticks"), "v")).To(Equal([]any{int64(1), int64(3)}))
		})

		It("appends every row of a kind without a key, duplicates included", func() {
			s.declare(eventKind())
			s.append("events", "event", row{"n": 1}, row{"n": 1})
			Expect(s.append("events", "event", row{"n": 1}).Appended).To(Equal(int64(1)))
			Expect(s.meta("events").Total).To(Equal(int64(3)))
		})

		It("forgets the keys of a deleted stream", func() {
			s.append("items", "item_skip", row{"id": "a", "v": 1})
			Expect(s.b.Delete(s.ctx, "items")).To(Succeed())
			res := s.append("items", "item_skip", row{"id": "a", "v": 2})
			first := s.genStart(1)
			Expect([]int64{res.From, res.To, res.Appended, res.Skipped}).To(Equal([]int64{first, first, 1, 0}))
		})
	})
}

func (s *suite) describeReplace() {
	Describe("replace", func() {
		BeforeEach(func() {
			s.requirePolicy(recordstore.ConflictReplace)
			s.declare(itemKind(recordstore.ConflictReplace))
		})

		It("deletes the stored row and appends the new one at the next seq", func() {
			s.append("items", "item_replace", row{"id": "a", "v": 1}, row{"id": "b", "v": 2})
			t1 := s.clock.Advance(time.Second)
			res := s.append("items", "item_replace", row{"id": "a", "v": 3})
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "items", Kind: s.kindName("item_replace", "items"), From: 3, To: 3, Appended: 1, Replaced: 1}))
			recs := s.scan("items")
			Expect(seqs(recs)).To(Equal([]int64{2, 3}))
			Expect(column(recs, "id")).To(Equal([]any{"b", "a"}))
			Expect(column(recs, "v")).To(Equal([]any{int64(2), int64(3)}))
			m := s.meta("items")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{2, 2, 3}))
			Expect(m.UpdatedAt).To(BeTemporally("==", t1))
		})

		It("leaves holes where replaced rows were", func() {
			s.append("items", "item_replace", row{"id": "a"}, row{"id": "b"}, row{"id": "c"})
			s.append("items", "item_replace", row{"id": "b", "note": "new"})
			recs := s.scan("items")
			Expect(seqs(recs)).To(Equal([]int64{1, 3, 4}))
			Expect(column(recs, "note")).To(Equal([]any{nil, nil, "new"}))
			m := s.meta("items")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{3, 1, 4}))
			recs, err := s.b.Scan(s.ctx, "items", recordstore.ScanOptions{After: 1, Limit: 1})
			Expect(err).NotTo(HaveOccurred())
			Expect(seqs(recs)).To(Equal([]int64{3}))
		})

		It("counts new and replacing rows of one append in one contiguous window", func() {
			s.append("items", "item_replace", row{"id": "a"}, row{"id": "b"})
			res := s.append("items", "item_replace", row{"id": "c"}, row{"id": "a", "v": 2}, row{"id": "d"}, row{"id": "b", "v": 2})
			Expect([]int64{res.From, res.To, res.Appended, res.Replaced, res.Skipped}).To(Equal([]int64{3, 6, 4, 2, 0}))
			recs := s.scan("items")
			Expect(seqs(recs)).To(Equal([]int64{3, 4, 5, 6}))
			Expect(column(recs, "id")).To(Equal([]any{"c", "a", "d", "b"}))
		})

		It("keeps one row per key however often it is replaced", func() {
			for i := range 5 {
				s.append("items", "item_replace", row{"id": "only", "v": i})
			}
			recs := s.scan("items")
			Expect(seqs(recs)).To(Equal([]int64{5}))
			Expect(column(recs, "v")).To(Equal([]any{int64(4)}))
			m := s.meta("items")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 5, 5}))
		})
	})
}
