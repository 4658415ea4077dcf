// Specs: appends, windows, Meta fields, Scan windows and stream listings.

package recordstoretest

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeAppends() {
	Describe("appends and windows", func() {
		BeforeEach(func() { s.declare(eventKind()) })

		It("numbers the first append's rows from 1 in generation 1", func() {
			res := s.append("orders", "event", events(1, 3)...)
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "orders", Kind: s.kindName("event", "orders"), From: 1, To: 3, Appended: 3}))
			expectMeta(s.meta("orders"), recordstore.Meta{
				Stream: "orders", Kind: s.kindName("event", "orders"), Generation: 1, Total: 3, LowSeq: 1, HighSeq: 3,
				CreatedAt: ClockStart, UpdatedAt: ClockStart,
			})
		})

		It("continues every window where the previous append ended", func() {
			want := int64(1)
			for i, n := range []int{2, 1, 5, 3} {
				s.clock.Advance(time.Duration(i+1) * time.Second)
				res := s.append("orders", "event", events(int(want), n)...)
				Expect(res.From).To(Equal(want))
				Expect(res.To).To(Equal(want + int64(n) - 1))
				Expect(res.Appended).To(BeEquivalentTo(n))
				want += int64(n)
			}
			m := s.meta("orders")
			Expect(m.HighSeq).To(Equal(want - 1))
			Expect(m.Total).To(Equal(want - 1))
			Expect(m.LowSeq).To(Equal(int64(1)))
		})

		It("stamps createdAt at the first append and updatedAt at the latest one", func() {
			t0 := s.clock.Now()
			s.append("orders", "event", events(1, 1)...)
			t1 := s.clock.Advance(90 * time.Second)
			s.append("orders", "event", events(2, 1)...)
			m := s.meta("orders")
			Expect(m.CreatedAt).To(BeTemporally("==", t0))
			Expect(m.UpdatedAt).To(BeTemporally("==", t1))
			Expect(m.ExpiresAt).To(BeNil())
		})

		It("stores the rows in seq order with the values given", func() {
			s.append("orders", "event", events(1, 2)...)
			s.append("orders", "event", recordstore.Row{"n": 7})
			recs := s.scan("orders")
			Expect(seqs(recs)).To(Equal([]int64{1, 2, 3}))
			Expect(column(recs, "n")).To(Equal([]any{int64(1), int64(2), int64(7)}))
			Expect(column(recs, "msg")).To(Equal([]any{"event 1", "event 2", nil}))
		})

		DescribeTable("Scan returns the rows after After, at most Limit of them",
			func(after int64, limit int, want []int64) {
				s.append("orders", "event", events(1, 3)...)
				s.append("orders", "event", events(4, 2)...)
				recs, err := s.b.Scan(s.ctx, "orders", recordstore.ScanOptions{After: after, Limit: limit})
				Expect(err).NotTo(HaveOccurred())
				Expect(seqs(recs)).To(Equal(want))
			},
			Entry("everything", int64(0), 0, []int64{1, 2, 3, 4, 5}),
			Entry("after a seq inside the first append", int64(2), 0, []int64{3, 4, 5}),
			Entry("a limit from the start", int64(0), 2, []int64{1, 2}),
			Entry("after and limit across two appends", int64(2), 2, []int64{3, 4}),
			Entry("a limit larger than what is left", int64(4), 10, []int64{5}),
			Entry("after the last seq", int64(5), 0, []int64{}),
			Entry("after a seq never written", int64(99), 3, []int64{}),
		)

		It("numbers each stream on its own", func() {
			s.append("a", "event", events(1, 2)...)
			s.append("b", "event", events(1, 1)...)
			Expect(s.append("a", "event", events(3, 1)...).From).To(Equal(int64(3)))
			Expect(s.append("b", "event", events(2, 1)...).From).To(Equal(int64(2)))
		})

		It("lists live streams by id in byte order, optionally of one kind", func() {
			s.skipBound("a bound kind holds one stream, so no kind has several to list")
			s.declare(allTypesKind())
			for _, id := range []string{"b", "a.1", "B", "a:0"} {
				s.append(id, "event", events(1, 1)...)
			}
			s.append("x-types", "all_types", recordstore.Row{"s": "x"})
			all, err := s.b.Streams(s.ctx, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(streamIDs(all)).To(Equal([]string{"B", "a.1", "a:0", "b", "x-types"}))
			for _, m := range all {
				expectMeta(m, s.meta(m.Stream))
			}
			ev, err := s.b.Streams(s.ctx, "event")
			Expect(err).NotTo(HaveOccurred())
			Expect(streamIDs(ev)).To(Equal([]string{"B", "a.1", "a:0", "b"}))
			at, err := s.b.Streams(s.ctx, "all_types")
			Expect(err).NotTo(HaveOccurred())
			Expect(streamIDs(at)).To(Equal([]string{"x-types"}))
		})

		It("lists no streams of a declared kind that has none", func() {
			s.declare(allTypesKind())
			s.append("orders", "event", events(1, 1)...)
			got, err := s.b.Streams(s.ctx, "all_types")
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(BeEmpty())
		})

		It("accepts a row with no values when no column is required", func() {
			s.declare(allTypesKind())
			Expect(s.append("empty-row", "all_types", recordstore.Row{}).Appended).To(Equal(int64(1)))
			recs := s.scan("empty-row")
			Expect(recs).To(HaveLen(1))
			Expect(recs[0].Values).To(HaveLen(len(allTypesKind().Columns)))
			for _, v := range recs[0].Values {
				Expect(v).To(BeNil())
			}
		})

		It("leaves the caller's rows and kind untouched", func() {
			k := allTypesKind()
			kindBefore := jsonText(k)
			s.declare(k)
			Expect(jsonText(k)).To(Equal(kindBefore))
			rows := []recordstore.Row{{"s": "x", "i": 1, "t": "2024-01-01T01:00:00+01:00", "j": map[string]any{"a": 1}}, {}}
			rowsBefore := jsonText(rows)
			s.append("untouched", "all_types", rows...)
			Expect(jsonText(rows)).To(Equal(rowsBefore))
			Expect(rows[1]).To(BeEmpty())
		})

		It("stores a large append in one window", func() {
			res := s.append("big", "event", events(1, 5000)...)
			Expect([]int64{res.From, res.To, res.Appended}).To(Equal([]int64{1, 5000, 5000}))
			recs := s.scan("big")
			Expect(recs).To(HaveLen(5000))
			Expect(recs[4999].Values["n"]).To(Equal(int64(5000)))
		})

		It("accepts the longest valid stream id", func() {
			id := strings.Repeat("z", 200)
			Expect(s.append(id, "event", events(1, 1)...).To).To(Equal(int64(1)))
			Expect(s.meta(id).Stream).To(Equal(id))
		})
	})
}

// streamIDs lists the stream ids of metas, in order.
func streamIDs(metas []recordstore.Meta) []string {
	out := make([]string, len(metas))
	for i, m := range metas {
		out[i] = m.Stream
	}
	return out
}
