// Specs for retention: stream ttl, row ttl and the sweeper, driven by an
// injected clock.

package sqlite_test

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

func retained(name string, mode recordstore.RetentionMode, ttl time.Duration) recordstore.Kind {
	k := eventsKind()
	k.Name = name
	k.Retention = &recordstore.Retention{Mode: mode, TTL: recordstore.Duration(ttl)}
	return k
}

var _ = Describe("retention", func() {
	var (
		b   *sqlite.Backend
		clk *clock
	)
	BeforeEach(func() {
		clk = newClock()
		b = openStore(clk)
		declare(b, retained("short", recordstore.RetainStream, time.Hour))
		declare(b, retained("rolling", recordstore.RetainRows, time.Hour))
	})

	It("expires a stream ttl after its first append; Sweep removes its rows and leaves a tombstone", func() {
		mustAppend(b, "s", "short", recordstore.Row{"name": "a"})
		Expect(*mustMeta(b, "s").ExpiresAt).To(Equal(clk.Now().Add(time.Hour)))
		clk.Advance(30 * time.Minute)
		mustAppend(b, "s", "short", recordstore.Row{"name": "b"})
		clk.Advance(30 * time.Minute)
		_, err := b.Meta(ctx, "s")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		db := rawDB(b)
		Expect(rawCount(db, `SELECT count(*) FROM short`)).To(BeEquivalentTo(2))

		Expect(b.Sweep(ctx)).To(Succeed())
		Expect(rawCount(db, `SELECT count(*) FROM short`)).To(BeZero())
		Expect(rawCount(db, `SELECT count(*) FROM record_appends a JOIN record_streams s ON s.no = a.stream WHERE s.id = 's'`)).To(BeZero())
		Expect(rawCount(db, `SELECT deleted FROM record_streams WHERE id = 's'`)).To(BeEquivalentTo(1))
		mustAppend(b, "s", "short", recordstore.Row{"name": "c"})
		Expect(mustMeta(b, "s").Generation).To(BeEquivalentTo(2))
	})

	It("trims appends older than the ttl, on append and on Sweep", func() {
		mustAppend(b, "r", "rolling", recordstore.Row{"name": "a"}, recordstore.Row{"name": "b"})
		clk.Advance(40 * time.Minute)
		mustAppend(b, "r", "rolling", recordstore.Row{"name": "c"})
		clk.Advance(40 * time.Minute) // the first append is now 80 minutes old
		Expect(b.Sweep(ctx)).To(Succeed())
		m := mustMeta(b, "r")
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{3, 3, 1}))

		clk.Advance(40 * time.Minute) // the second append is 80 minutes old
		res := mustAppend(b, "r", "rolling", recordstore.Row{"name": "d"})
		Expect(res.From).To(BeEquivalentTo(4))
		m = mustMeta(b, "r")
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{4, 4, 1}))
		Expect(values(mustScan(b, "r"), "name")).To(Equal([]any{"d"}))
	})

	It("runs in the background every SweepInterval until Close", func() {
		path := storePath()
		bg := openAt(path, sqlite.Options{Now: clk.Now, SweepInterval: 5 * time.Millisecond})
		declare(bg, retained("short", recordstore.RetainStream, time.Hour))
		mustAppend(bg, "s", "short", recordstore.Row{"name": "a"})
		db := rawDB(bg)
		Consistently(func() int64 { return rawCount(db, `SELECT count(*) FROM short`) }, "50ms").Should(BeEquivalentTo(1))
		clk.Advance(2 * time.Hour)
		Eventually(func() int64 { return rawCount(db, `SELECT count(*) FROM short`) }).Should(BeZero())
		Expect(bg.Close()).To(Succeed())
	})

	It("reports each background run to Options.Swept, with its error", func() {
		var mu sync.Mutex
		var runs []error
		bg := openAt(storePath(), sqlite.Options{Now: clk.Now, SweepInterval: 5 * time.Millisecond,
			Swept: func(took time.Duration, err error) {
				Expect(took).To(BeNumerically(">=", 0))
				mu.Lock()
				runs = append(runs, err)
				mu.Unlock()
			}})
		Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(runs) }).Should(BeNumerically(">=", 2))
		Expect(bg.Close()).To(Succeed())
		mu.Lock()
		defer mu.Unlock()
		Expect(runs).To(HaveEach(BeNil()), "a store with nothing to sweep sweeps without error")
	})
})
