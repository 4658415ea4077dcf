// Specs: seal and reopen (the generation fence), delete and generations,
// and a closed backend.

package recordstoretest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeLifecycle() {
	Describe("seal and reopen", func() {
		BeforeEach(func() {
			s.declare(eventKind())
			s.append("st", "event", events(1, 2)...)
		})

		It("seals, stamps updatedAt and refuses appends until reopened", func() {
			t1 := s.clock.Advance(time.Minute)
			m, err := s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			want := recordstore.Meta{Stream: "st", Kind: s.kindName("event", "st"), Generation: 1, Total: 2, LowSeq: 1, HighSeq: 2,
				Sealed: true, CreatedAt: ClockStart, UpdatedAt: t1}
			expectMeta(m, want)
			expectMeta(s.meta("st"), want)
			_, err = s.b.Append(s.ctx, "st", "event", events(3, 1))
			expectRefused(err, recordstore.ErrSealed, "sealed")

			t2 := s.clock.Advance(time.Minute)
			m, err = s.b.Reopen(s.ctx, "st", 1)
			Expect(err).NotTo(HaveOccurred())
			want.Sealed, want.UpdatedAt = false, t2
			expectMeta(m, want)
			Expect(s.append("st", "event", events(3, 1)...).From).To(Equal(int64(3)))
		})

		It("treats sealing a sealed stream as a no-op that keeps updatedAt", func() {
			_, err := s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			before := s.snapshot()
			s.clock.Advance(time.Minute)
			m, err := s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Sealed).To(BeTrue())
			Expect(m.UpdatedAt).To(BeTemporally("==", ClockStart))
			s.expectUnchanged(before)
		})

		It("treats reopening an open stream as a no-op that keeps updatedAt", func() {
			before := s.snapshot()
			s.clock.Advance(time.Minute)
			m, err := s.b.Reopen(s.ctx, "st", 1)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Sealed).To(BeFalse())
			s.expectUnchanged(before)
		})

		It("fences reopen by generation: the old generation's number no longer opens the new one", func() {
			_, err := s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			Expect(s.b.Delete(s.ctx, "st")).To(Succeed())
			s.append("st", "event", events(1, 1)...)
			_, err = s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			before := s.snapshot()
			_, err = s.b.Reopen(s.ctx, "st", 1)
			expectRefused(err, recordstore.ErrNotFound, "not_found")
			s.expectUnchanged(before)
			m, err := s.b.Reopen(s.ctx, "st", 2)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Sealed).To(BeFalse())
			Expect(m.Generation).To(Equal(int64(2)))
		})

		It("still serves reads of a sealed stream", func() {
			_, err := s.b.Seal(s.ctx, "st")
			Expect(err).NotTo(HaveOccurred())
			Expect(seqs(s.scan("st"))).To(Equal([]int64{1, 2}))
			ms, err := s.b.Streams(s.ctx, "event")
			Expect(err).NotTo(HaveOccurred())
			Expect(streamIDs(ms)).To(Equal([]string{"st"}))
		})
	})

	Describe("delete and generations", func() {
		BeforeEach(func() {
			s.declare(eventKind())
			s.append("d", "event", events(1, 3)...)
		})

		It("removes the stream and its rows", func() {
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			s.expectGone("d")
		})

		It("starts generation+1 at seq 1 with none of the old rows when appended to again", func() {
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			t1 := s.clock.Advance(time.Minute)
			res := s.append("d", "event", events(100, 2)...)
			first := s.genStart(3)
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "d", Kind: s.kindName("event", "d"), From: first, To: first + 1, Appended: 2}))
			expectMeta(s.meta("d"), recordstore.Meta{Stream: "d", Kind: s.kindName("event", "d"), Generation: 2, Total: 2, LowSeq: first, HighSeq: first + 1,
				CreatedAt: t1, UpdatedAt: t1})
			Expect(column(s.scan("d"), "n")).To(Equal([]any{int64(100), int64(101)}))
		})

		It("counts generations up by one per recreation", func() {
			for gen := int64(2); gen <= 4; gen++ {
				Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
				s.append("d", "event", events(1, 1)...)
				Expect(s.meta("d").Generation).To(Equal(gen))
			}
		})

		It("deletes a sealed stream, and the next generation is open", func() {
			_, err := s.b.Seal(s.ctx, "d")
			Expect(err).NotTo(HaveOccurred())
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			s.append("d", "event", events(1, 1)...)
			Expect(s.meta("d").Sealed).To(BeFalse())
		})

		It("lets a deleted stream come back under another kind", func() {
			s.declare(allTypesKind())
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			s.append("d", "all_types", row{"i": 1})
			m := s.meta("d")
			Expect(m.Kind).To(Equal("all_types"))
			Expect(m.Generation).To(Equal(int64(2)))
		})

		It("leaves other streams alone", func() {
			s.append("other", "event", events(1, 2)...)
			before := s.snapshot()
			Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
			after := s.snapshot()
			Expect(after.Rows["other"]).To(Equal(before.Rows["other"]))
			Expect(after.Streams).To(HaveLen(1))
		})
	})

	Describe("a closed backend", func() {
		It("refuses every call with ErrClosed", func() {
			s.declare(eventKind())
			s.append("c", "event", events(1, 1)...)
			s.closed = true
			Expect(s.b.Close()).To(Succeed())
			calls := map[string]func() error{
				"DeclareKind": func() error { _, err := s.b.DeclareKind(s.ctx, allTypesKind()); return err },
				"Kinds":       func() error { _, err := s.b.Kinds(s.ctx); return err },
				"Kind":        func() error { _, err := s.b.Kind(s.ctx, "event"); return err },
				"Append":      func() error { _, err := s.b.Append(s.ctx, "c", "event", events(2, 1)); return err },
				"Scan":        func() error { _, err := s.b.Scan(s.ctx, "c", recordstore.ScanOptions{}); return err },
				"Meta":        func() error { _, err := s.b.Meta(s.ctx, "c"); return err },
				"Streams":     func() error { _, err := s.b.Streams(s.ctx, ""); return err },
				"Seal":        func() error { _, err := s.b.Seal(s.ctx, "c"); return err },
				"Reopen":      func() error { _, err := s.b.Reopen(s.ctx, "c", 1); return err },
				"Expire":      func() error { _, err := s.b.Expire(s.ctx, "c", time.Hour); return err },
				"Trim":        func() error { _, err := s.b.Trim(s.ctx, "c", s.clock.Now()); return err },
				"Delete":      func() error { return s.b.Delete(s.ctx, "c") },
			}
			if sw := s.sweeper(); sw != nil {
				calls["Sweep"] = func() error { return sw.Sweep(s.ctx) }
			}
			for name, call := range calls {
				err := call()
				Expect(err).To(MatchError(recordstore.ErrClosed), name)
				Expect(recordstore.Code(err)).To(Equal("closed"), name)
			}
			err := s.b.Close()
			if err != nil {
				Expect(err).To(MatchError(recordstore.ErrClosed), "a second Close returns nil or ErrClosed")
			}
		})
	})
}
