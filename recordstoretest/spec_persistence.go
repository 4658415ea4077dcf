// Specs: what survives closing and reopening a store (skipped for backends
// whose harness cannot reopen).

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// reopenStore closes the backend and opens the same store again.
func (s *suite) reopenStore() {
	b, err := s.h.Reopen(s.ctx, s.clock, s.b)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "reopen the store")
	s.b = b
}

func (s *suite) describePersistence() {
	Describe("persistence", func() {
		BeforeEach(func() {
			if s.h.Reopen == nil {
				Skip("the harness cannot reopen a store")
			}
			s.declare(eventKind(), allTypesKind(), itemKind(recordstore.ConflictSkip))
			if !s.bound() { // a bound kind has no retention
				s.declare(retainedKind("session", recordstore.RetainStream, time.Hour),
					retainedKind("metric", recordstore.RetainRows, time.Hour))
			}
		})

		It("reads the same after a reopen: kinds, streams, rows, seals, expiries", func() {
			s.append("ev", "event", events(1, 3)...)
			s.append("types", "all_types", row{"s": "ü", "i": int64(-1) << 62, "f": 0.5, "b": true,
				"t": "2024-01-01T00:00:00.000001Z", "j": map[string]any{"k": []any{1}}})
			if !s.bound() {
				s.append("sess", "session", row{"n": 1})
			}
			s.append("sealed", "event", events(1, 1)...)
			_, err := s.b.Seal(s.ctx, "sealed")
			Expect(err).NotTo(HaveOccurred())
			s.clock.Advance(time.Minute)
			_, err = s.b.Expire(s.ctx, "ev", 2*time.Hour)
			Expect(err).NotTo(HaveOccurred())
			before := s.snapshot()
			s.reopenStore()
			s.expectUnchanged(before)
		})

		It("keeps counting generations and seqs after a reopen", func() {
			s.append("d", "event", events(1, 3)...)
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			s.append("t", "event", events(1, 2)...)
			_, err := s.b.Trim(s.ctx, "t", s.clock.Now().Add(time.Second))
			Expect(err).NotTo(HaveOccurred())
			s.reopenStore()
			Expect(s.append("d", "event", events(1, 1)...).From).To(Equal(s.genStart(3)))
			Expect(s.meta("d").Generation).To(Equal(int64(2)))
			Expect(s.append("t", "event", events(3, 1)...).From).To(Equal(int64(3)))
		})

		It("keeps generation numbers of expired streams after a reopen", func() {
			s.skipBound("a bound kind has no retention")
			s.append("sess", "session", row{"n": 1})
			s.clock.Advance(time.Hour)
			s.sweep()
			s.reopenStore()
			s.append("sess", "session", row{"n": 2})
			Expect(s.meta("sess").Generation).To(Equal(int64(2)))
		})

		It("keeps stored keys after a reopen", func() {
			s.append("items", "item_skip", row{"id": "a", "v": 1})
			s.reopenStore()
			res := s.append("items", "item_skip", row{"id": "a", "v": 2})
			Expect([]int64{res.Appended, res.Skipped}).To(Equal([]int64{0, 1}))
		})

		It("keeps retention times after a reopen", func() {
			s.skipBound("a bound kind has no retention")
			t0 := s.clock.Now()
			s.append("sess", "session", row{"n": 1})
			s.append("m", "metric", row{"n": 1})
			s.clock.Advance(30 * time.Minute)
			s.append("m", "metric", row{"n": 2})
			s.reopenStore()
			s.clock.Set(t0.Add(time.Hour))
			_, err := s.b.Meta(s.ctx, "sess")
			expectNotFound(err)
			s.clock.Set(t0.Add(time.Hour + time.Microsecond))
			s.append("m", "metric", row{"n": 3})
			Expect(seqs(s.scan("m"))).To(Equal([]int64{2, 3}))
		})
	})
}
