// Specs for expire, trim, delete and the stream listing, with the clock
// injected through Options.Now.

package sqlite_test

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("stream mutations", func() {
	var (
		b   *sqlite.Backend
		clk *clock
	)
	BeforeEach(func() {
		clk = newClock()
		b = openStore(clk)
		declare(b, eventsKind())
	})

	It("expires a stream: not found at once, next append starts a new generation", func() {
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		_, err := b.Expire(ctx, "s", 0)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		m, err := b.Expire(ctx, "s", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(*m.ExpiresAt).To(Equal(clk.Now().Add(time.Minute)))
		clk.Advance(time.Minute)
		_, err = b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		_, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		Expect(errors.Is(b.Delete(ctx, "s"), recordstore.ErrNotFound)).To(BeTrue())

		res := mustAppend(b, "s", "events", recordstore.Row{"name": "b"})
		Expect(res.From).To(BeEquivalentTo(1))
		m = mustMeta(b, "s")
		Expect([]int64{m.Generation, m.Total}).To(Equal([]int64{2, 1}))
		Expect(m.ExpiresAt).To(BeNil())
		Expect(values(mustScan(b, "s"), "name")).To(Equal([]any{"b"}))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM events`)).To(BeEquivalentTo(1))
	})

	It("trims the appends made before a time and moves LowSeq", func() {
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"}, recordstore.Row{"name": "b"})
		clk.Advance(time.Second)
		cut := clk.Now()
		mustAppend(b, "s", "events", recordstore.Row{"name": "c"})
		m, err := b.Trim(ctx, "s", cut)
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{3, 3, 1}))
		Expect(seqs(mustScan(b, "s"))).To(Equal([]int64{3}))
		m, err = b.Trim(ctx, "s", cut.Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{4, 3, 0}))
		Expect(mustAppend(b, "s", "events", recordstore.Row{"name": "d"}).From).To(BeEquivalentTo(4))
		Expect(mustMeta(b, "s").LowSeq).To(BeEquivalentTo(4))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_appends`)).To(BeEquivalentTo(1))
	})

	It("deletes a stream to a tombstone and restarts at seq 1 in a higher generation", func() {
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Expect(b.Delete(ctx, "s")).To(Succeed())
		Expect(errors.Is(b.Delete(ctx, "s"), recordstore.ErrNotFound)).To(BeTrue())
		_, err := b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		db := rawDB(b)
		Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeZero())
		Expect(rawCount(db, `SELECT deleted FROM record_streams WHERE id = 's'`)).To(BeEquivalentTo(1))
		mustAppend(b, "s", "events", recordstore.Row{"name": "b"})
		Expect(mustMeta(b, "s").Generation).To(BeEquivalentTo(2))
	})

	It("lists live streams sorted, filtered by kind", func() {
		declare(b, keyedKind("users", recordstore.ConflictSkip))
		mustAppend(b, "b", "events", recordstore.Row{"name": "x"})
		mustAppend(b, "a", "events", recordstore.Row{"name": "x"})
		mustAppend(b, "u", "users", kv("1", "", 1, ""))
		mustAppend(b, "gone", "events", recordstore.Row{"name": "x"})
		Expect(b.Delete(ctx, "gone")).To(Succeed())
		ids := func(kind string) []string {
			ms, err := b.Streams(ctx, kind)
			Expect(err).NotTo(HaveOccurred())
			out := []string{}
			for _, m := range ms {
				out = append(out, m.Stream)
			}
			return out
		}
		Expect(ids("")).To(Equal([]string{"a", "b", "u"}))
		Expect(ids("events")).To(Equal([]string{"a", "b"}))
		_, err := b.Streams(ctx, "nope")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
	})

	It("notifies followers after each commit", func() {
		ch := b.Notifier().Changed("s")
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Expect(ch).To(BeClosed())
		ch = b.Notifier().Changed("s")
		_, err := b.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(ch).To(BeClosed())
	})
})
