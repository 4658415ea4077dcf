// Specs: retention (stream and rows modes), Expire and Trim, all driven by
// the fake clock.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// expectGone checks that every per-stream call reads stream as not found
// and that listings leave it out.
func (s *suite) expectGone(stream string) {
	_, err := s.b.Meta(s.ctx, stream)
	expectNotFound(err)
	_, err = s.b.Scan(s.ctx, stream, recordstore.ScanOptions{})
	expectNotFound(err)
	_, err = s.b.Seal(s.ctx, stream)
	expectNotFound(err)
	_, err = s.b.Reopen(s.ctx, stream, 1)
	expectNotFound(err)
	_, err = s.b.Expire(s.ctx, stream, time.Hour)
	expectNotFound(err)
	_, err = s.b.Trim(s.ctx, stream, s.clock.Now())
	expectNotFound(err)
	expectNotFound(s.b.Delete(s.ctx, stream))
	all, err := s.b.Streams(s.ctx, "")
	Expect(err).NotTo(HaveOccurred())
	Expect(streamIDs(all)).NotTo(ContainElement(stream))
}

func (s *suite) describeRetention() {
	Describe("stream retention", func() {
		BeforeEach(func() { s.declare(retainedKind("session", recordstore.RetainStream, time.Hour)) })

		It("expires the stream ttl after its first append, later appends notwithstanding", func() {
			t0 := s.clock.Now()
			s.append("s1", "session", row{"n": 1})
			s.clock.Advance(50 * time.Minute)
			s.append("s1", "session", row{"n": 2})
			m := s.meta("s1")
			Expect(m.ExpiresAt).NotTo(BeNil())
			Expect(*m.ExpiresAt).To(BeTemporally("==", t0.Add(time.Hour)))
			s.clock.Set(t0.Add(time.Hour - time.Microsecond))
			Expect(s.meta("s1").Total).To(Equal(int64(2)), "alive a microsecond before expiry")
			s.clock.Set(t0.Add(time.Hour))
			s.expectGone("s1")
		})

		It("starts a new generation at seq 1 with a new expiry when appended to after expiry", func() {
			s.append("s1", "session", row{"n": 1}, row{"n": 2})
			t1 := s.clock.Advance(2 * time.Hour)
			res := s.append("s1", "session", row{"n": 3})
			Expect([]int64{res.From, res.To}).To(Equal([]int64{1, 1}))
			expectMeta(s.meta("s1"), recordstore.Meta{Stream: "s1", Kind: s.kindName("session", "s1"), Generation: 2, Total: 1, LowSeq: 1, HighSeq: 1,
				CreatedAt: t1, UpdatedAt: t1, ExpiresAt: at(t1.Add(time.Hour))})
			Expect(column(s.scan("s1"), "n")).To(Equal([]any{int64(3)}))
		})

		It("keeps counting generations after a sweep has removed an expired stream", func() {
			s.append("s1", "session", row{"n": 1})
			s.clock.Advance(time.Hour)
			if !s.sweep() {
				Skip("the backend has no sweeper")
			}
			s.expectGone("s1")
			s.append("s1", "session", row{"n": 2})
			Expect(s.meta("s1").Generation).To(Equal(int64(2)))
		})
	})

	Describe("rows retention", func() {
		BeforeEach(func() { s.declare(retainedKind("metric", recordstore.RetainRows, time.Hour)) })

		It("drops the rows of appends older than ttl when a new append arrives", func() {
			t0 := s.clock.Now()
			s.append("m", "metric", row{"n": 1}, row{"n": 2})
			s.clock.Set(t0.Add(40 * time.Minute))
			s.append("m", "metric", row{"n": 3})
			s.clock.Set(t0.Add(time.Hour))
			s.append("m", "metric", row{"n": 4})
			Expect(seqs(s.scan("m"))).To(Equal([]int64{1, 2, 3, 4}), "an append exactly ttl old is kept")
			t2 := t0.Add(time.Hour + time.Microsecond)
			s.clock.Set(t2)
			res := s.append("m", "metric", row{"n": 5})
			Expect([]int64{res.From, res.To}).To(Equal([]int64{5, 5}))
			Expect(seqs(s.scan("m"))).To(Equal([]int64{3, 4, 5}))
			expectMeta(s.meta("m"), recordstore.Meta{Stream: "m", Kind: s.kindName("metric", "m"), Generation: 1, Total: 3, LowSeq: 3, HighSeq: 5,
				CreatedAt: t0, UpdatedAt: t2})
		})

		It("leaves old rows readable until an append or a sweep drops them", func() {
			s.append("m", "metric", row{"n": 1})
			s.clock.Advance(3 * time.Hour)
			Expect(seqs(s.scan("m"))).To(Equal([]int64{1}))
			Expect(s.meta("m").Total).To(Equal(int64(1)))
		})

		It("drops old rows on a sweep and stamps updatedAt", func() {
			t0 := s.clock.Now()
			s.append("m", "metric", row{"n": 1})
			s.clock.Advance(30 * time.Minute)
			s.append("m", "metric", row{"n": 2})
			t2 := s.clock.Advance(31 * time.Minute)
			if !s.sweep() {
				Skip("the backend has no sweeper")
			}
			expectMeta(s.meta("m"), recordstore.Meta{Stream: "m", Kind: s.kindName("metric", "m"), Generation: 1, Total: 1, LowSeq: 2, HighSeq: 2,
				CreatedAt: t0, UpdatedAt: t2})
			before := s.snapshot()
			s.clock.Advance(time.Minute)
			s.sweep()
			s.expectUnchanged(before)
		})

		It("changes nothing on a sweep when the old appends' rows were all replaced", func() {
			s.requirePolicy(recordstore.ConflictReplace)
			k := itemKind(recordstore.ConflictReplace)
			k.Name, k.Retention = "keyed_gauge", &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)}
			s.declare(k)
			s.append("g", "keyed_gauge", row{"id": "a", "v": 1})
			s.clock.Advance(30 * time.Minute)
			s.append("g", "keyed_gauge", row{"id": "a", "v": 2})
			before := s.snapshot()
			s.clock.Advance(31 * time.Minute)
			if !s.sweep() {
				Skip("the backend has no sweeper")
			}
			s.expectUnchanged(before)
		})

		It("keeps the seq running after every row has been dropped", func() {
			s.append("m", "metric", row{"n": 1}, row{"n": 2})
			s.clock.Advance(2 * time.Hour)
			res := s.append("m", "metric", row{"n": 3})
			Expect([]int64{res.From, res.To}).To(Equal([]int64{3, 3}))
			m := s.meta("m")
			Expect([]int64{m.Generation, m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{1, 1, 3, 3}))
		})

		It("drops expired rows before looking for key conflicts", func() {
			k := itemKind(recordstore.ConflictSkip)
			k.Name, k.Retention = "keyed_metric", &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)}
			s.declare(k)
			s.append("km", "keyed_metric", row{"id": "a", "v": 1})
			s.clock.Advance(2 * time.Hour)
			res := s.append("km", "keyed_metric", row{"id": "a", "v": 2})
			Expect([]int64{res.From, res.To, res.Appended, res.Skipped}).To(Equal([]int64{2, 2, 1, 0}))
			Expect(column(s.scan("km"), "v")).To(Equal([]any{int64(2)}))
		})
	})

	s.describeExpire()
	s.describeTrim()
}
