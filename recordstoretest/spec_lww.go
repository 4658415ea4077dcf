// Specs: the last-writer-wins policy — version order per column type,
// tiebreaks in byte order, and nulls.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeLWW() {
	Describe("lww", func() {
		BeforeEach(func() { s.requirePolicy(recordstore.ConflictLWW) })

		// expectOutcome appends in to stream lww (holding one row at seq 1)
		// and checks that it replaced that row, or changed nothing.
		expectOutcome := func(kind string, in recordstore.Row, wins bool) {
			before := s.snapshot()
			t1 := s.clock.Advance(time.Second)
			res := s.append("lww", kind, in)
			if !wins {
				Expect(res).To(Equal(recordstore.AppendResult{Stream: "lww", Kind: kind, From: 2, To: 1, Skipped: 1}))
				s.expectUnchanged(before)
				return
			}
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "lww", Kind: kind, From: 2, To: 2, Appended: 1, Replaced: 1}))
			recs := s.scan("lww")
			Expect(seqs(recs)).To(Equal([]int64{2}))
			Expect(recs[0].Values["v"]).To(Equal(int64(2)))
			m := s.meta("lww")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 2, 2}))
			Expect(m.UpdatedAt).To(BeTemporally("==", t1))
		}

		DescribeTable("lets an incoming row win only with a greater version, or an equal version and a smaller tiebreak",
			func(ver any, node any, wins bool) {
				s.declare(lwwKind())
				s.append("lww", "item_lww", row{"id": "a", "ver": 5, "node": "m", "v": 1})
				expectOutcome("item_lww", row{"id": "a", "ver": ver, "node": node, "v": 2}, wins)
			},
			Entry("a greater version", 6, "z", true),
			Entry("a greater version that sorts first as text", 10, "z", true),
			Entry("a smaller version", 4, "a", false),
			Entry("a negative version", -7, "a", false),
			Entry("an equal version with a smaller tiebreak", 5, "l", true),
			Entry("an equal version with an upper-case tiebreak (smaller byte-wise)", 5, "M", true),
			Entry("an equal version with a greater tiebreak", 5, "n", false),
			Entry("an equal version with a non-ASCII tiebreak (greater byte-wise)", 5, "é", false),
			Entry("an equal version and tiebreak", 5, "m", false),
			Entry("a null version, which sorts before every version", nil, "a", false),
			Entry("an equal version with a null tiebreak, which sorts before every tiebreak", 5, nil, true),
		)

		It("lets any version beat a stored null version", func() {
			s.declare(lwwKind())
			s.append("lww", "item_lww", row{"id": "a", "node": "m", "v": 1})
			expectOutcome("item_lww", row{"id": "a", "ver": -100, "node": "z", "v": 2}, true)
		})

		It("skips an equal version when the kind has no tiebreak", func() {
			k := lwwKind()
			k.Name, k.LWW = "lww_plain", &recordstore.LWW{Version: "ver"}
			s.declare(k)
			s.append("lww", "lww_plain", row{"id": "a", "ver": 5, "node": "z", "v": 1})
			expectOutcome("lww_plain", row{"id": "a", "ver": 5, "node": "a", "v": 2}, false)
		})

		It("stores a row whose key is new whatever its version", func() {
			s.declare(lwwKind())
			s.append("lww", "item_lww", row{"id": "a", "ver": 5, "node": "m", "v": 1})
			res := s.append("lww", "item_lww", row{"id": "b", "ver": -1, "node": "z", "v": 1})
			Expect([]int64{res.From, res.To, res.Appended, res.Replaced, res.Skipped}).To(Equal([]int64{2, 2, 1, 0, 0}))
		})

		DescribeTable("orders versions of every comparable type by value",
			func(t recordstore.ColumnType, stored, incoming any, wins bool) {
				s.declare(recordstore.Kind{Name: "lww_typed", Columns: []recordstore.Column{
					{Name: "id", Type: recordstore.TypeString},
					{Name: "ver", Type: t},
					{Name: "v", Type: recordstore.TypeInteger},
				}, Key: []string{"id"}, OnConflict: recordstore.ConflictLWW, LWW: &recordstore.LWW{Version: "ver"}})
				s.append("lww", "lww_typed", row{"id": "a", "ver": stored, "v": 1})
				expectOutcome("lww_typed", row{"id": "a", "ver": incoming, "v": 2}, wins)
			},
			Entry("a later datetime", recordstore.TypeDatetime, "2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00.500001Z", true),
			Entry("an earlier datetime with fewer fraction digits", recordstore.TypeDatetime, "2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00.25Z", false),
			Entry("an earlier instant written in a later-looking zone", recordstore.TypeDatetime, "2024-01-01T00:00:00.5Z", "2024-01-01T01:00:00.1+02:00", false),
			Entry("the same instant in another zone", recordstore.TypeDatetime, "2024-01-01T00:00:00.5Z", "2024-01-01T02:00:00.5+02:00", false),
			Entry("a greater number", recordstore.TypeNumber, 1.5, 2, true),
			Entry("a smaller number", recordstore.TypeNumber, 1.5, 1.25, false),
			Entry("an equal number", recordstore.TypeNumber, 1.5, 1.5, false),
			Entry("a greater integer past 2^53", recordstore.TypeInteger, int64(1)<<60, int64(1)<<60+1, true),
			Entry("a greater string", recordstore.TypeString, "b", "ba", true),
			Entry("a shorter prefix string", recordstore.TypeString, "b", "ab", false),
			Entry("an upper-case string (smaller byte-wise)", recordstore.TypeString, "b", "B", false),
			Entry("a non-ASCII string (greater byte-wise)", recordstore.TypeString, "z", "é", true),
		)
	})
}
