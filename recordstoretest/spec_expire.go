// Specs: Expire and Trim.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeExpire() {
	Describe("expire", func() {
		BeforeEach(func() {
			s.declare(eventKind())
			s.append("e", "event", events(1, 2)...)
		})

		It("sets expiresAt ttl from now, stamps updatedAt and returns the new meta", func() {
			t1 := s.clock.Advance(time.Minute)
			m, err := s.b.Expire(s.ctx, "e", 10*time.Minute)
			Expect(err).NotTo(HaveOccurred())
			want := recordstore.Meta{Stream: "e", Kind: s.kindName("event", "e"), Generation: 1, Total: 2, LowSeq: 1, HighSeq: 2,
				CreatedAt: ClockStart, UpdatedAt: t1, ExpiresAt: at(t1.Add(10 * time.Minute))}
			expectMeta(m, want)
			expectMeta(s.meta("e"), want)
		})

		It("moves an expiry later or earlier when called again", func() {
			_, err := s.b.Expire(s.ctx, "e", time.Minute)
			Expect(err).NotTo(HaveOccurred())
			m, err := s.b.Expire(s.ctx, "e", time.Hour)
			Expect(err).NotTo(HaveOccurred())
			Expect(*m.ExpiresAt).To(BeTemporally("==", ClockStart.Add(time.Hour)))
			s.clock.Advance(30 * time.Minute)
			Expect(s.meta("e").Total).To(Equal(int64(2)))
			m, err = s.b.Expire(s.ctx, "e", time.Second)
			Expect(err).NotTo(HaveOccurred())
			Expect(*m.ExpiresAt).To(BeTemporally("==", ClockStart.Add(30*time.Minute+time.Second)))
		})

		It("makes the stream unreadable at the expiry instant, and a later append starts generation 2", func() {
			_, err := s.b.Expire(s.ctx, "e", time.Minute)
			Expect(err).NotTo(HaveOccurred())
			s.clock.Advance(time.Minute - time.Microsecond)
			Expect(s.meta("e").HighSeq).To(Equal(int64(2)))
			s.clock.Advance(time.Microsecond)
			s.expectGone("e")
			t2 := s.clock.Advance(time.Second)
			first := s.genStart(2)
			Expect(s.append("e", "event", events(1, 1)...).From).To(Equal(first))
			expectMeta(s.meta("e"), recordstore.Meta{Stream: "e", Kind: s.kindName("event", "e"), Generation: 2, Total: 1, LowSeq: first, HighSeq: first,
				CreatedAt: t2, UpdatedAt: t2})
		})

		It("expires a sealed stream too, and its successor is not sealed", func() {
			_, err := s.b.Seal(s.ctx, "e")
			Expect(err).NotTo(HaveOccurred())
			_, err = s.b.Expire(s.ctx, "e", time.Second)
			Expect(err).NotTo(HaveOccurred())
			s.clock.Advance(time.Second)
			s.expectGone("e")
			s.append("e", "event", events(1, 1)...)
			Expect(s.meta("e").Sealed).To(BeFalse())
		})

		It("lets an expired stream come back under another kind", func() {
			s.declare(allTypesKind())
			_, err := s.b.Expire(s.ctx, "e", time.Second)
			Expect(err).NotTo(HaveOccurred())
			s.clock.Advance(time.Second)
			s.append("e", "all_types", row{"s": "x"})
			m := s.meta("e")
			Expect(m.Kind).To(Equal("all_types"))
			Expect(m.Generation).To(Equal(int64(2)))
		})
	})
}

func (s *suite) describeTrim() {
	Describe("trim", func() {
		var t0, t1, t2 time.Time
		BeforeEach(func() {
			s.declare(eventKind())
			t0 = s.clock.Now()
			s.append("t", "event", events(1, 2)...)
			t1 = s.clock.Advance(time.Minute)
			s.append("t", "event", events(3, 2)...)
			t2 = s.clock.Advance(time.Minute)
			s.append("t", "event", events(5, 1)...)
		})

		It("drops the rows of appends made before the given time", func() {
			t3 := s.clock.Advance(time.Minute)
			m, err := s.b.Trim(s.ctx, "t", t1)
			Expect(err).NotTo(HaveOccurred())
			want := recordstore.Meta{Stream: "t", Kind: s.kindName("event", "t"), Generation: 1, Total: 3, LowSeq: 3, HighSeq: 5,
				CreatedAt: t0, UpdatedAt: t3}
			expectMeta(m, want)
			expectMeta(s.meta("t"), want)
			Expect(seqs(s.scan("t"))).To(Equal([]int64{3, 4, 5}))
		})

		It("keeps an append made one microsecond after the trim time", func() {
			_, err := s.b.Trim(s.ctx, "t", t1.Add(-time.Microsecond))
			Expect(err).NotTo(HaveOccurred())
			Expect(seqs(s.scan("t"))).To(Equal([]int64{3, 4, 5}))
		})

		It("changes nothing, not even updatedAt, when no append is that old", func() {
			before := s.snapshot()
			s.clock.Advance(time.Minute)
			m, err := s.b.Trim(s.ctx, "t", t0)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.UpdatedAt).To(BeTemporally("==", t2))
			s.expectUnchanged(before)
		})

		It("can drop every row and the seq keeps running in the same generation", func() {
			m, err := s.b.Trim(s.ctx, "t", t2.Add(time.Hour))
			Expect(err).NotTo(HaveOccurred())
			Expect([]int64{m.Generation, m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 0, 6, 5}))
			Expect(s.scan("t")).To(BeEmpty())
			res := s.append("t", "event", events(6, 1)...)
			Expect([]int64{res.From, res.To}).To(Equal([]int64{6, 6}))
			m = s.meta("t")
			Expect([]int64{m.Generation, m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 1, 6, 6}))
		})

		It("trims a sealed stream", func() {
			_, err := s.b.Seal(s.ctx, "t")
			Expect(err).NotTo(HaveOccurred())
			m, err := s.b.Trim(s.ctx, "t", t1)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Sealed).To(BeTrue())
			Expect(m.Total).To(Equal(int64(3)))
		})

		It("changes nothing when the only appends that old had all their rows replaced", func() {
			s.requirePolicy(recordstore.ConflictReplace)
			s.declare(itemKind(recordstore.ConflictReplace))
			s.clock.Set(t0)
			s.append("r", "item_replace", row{"id": "a"})
			s.clock.Set(t1)
			s.append("r", "item_replace", row{"id": "a", "v": 2})
			before := s.snapshot()
			s.clock.Set(t2)
			m, err := s.b.Trim(s.ctx, "r", t1)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.UpdatedAt).To(BeTemporally("==", t1), "no row went, so updatedAt stays")
			s.expectUnchanged(before)
		})

		It("trims a replaced row by the time of the append that replaced it", func() {
			s.requirePolicy(recordstore.ConflictReplace)
			s.declare(itemKind(recordstore.ConflictReplace))
			s.clock.Set(t0)
			s.append("r", "item_replace", row{"id": "a"}, row{"id": "b"})
			s.clock.Set(t2)
			s.append("r", "item_replace", row{"id": "a", "v": 2})
			_, err := s.b.Trim(s.ctx, "r", t1)
			Expect(err).NotTo(HaveOccurred())
			recs := s.scan("r")
			Expect(seqs(recs)).To(Equal([]int64{3}))
			Expect(column(recs, "id")).To(Equal([]any{"a"}))
		})
	})
}
