// The race: four archiver processes loop passes on one history folder
// while a producer keeps sealing files into it and a chaos loop kills or
// pauses one of them at random. The invariants are checked at the end.

package archive_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
)

var _ = Describe("The archiver race", Label("integration", "crash"), func() {
	It("archives every event of every sealed file exactly once, while archivers are killed and paused at random", func() {
		shared := GinkgoT().TempDir()
		hist := filepath.Join(shared, "history", "c1")
		Expect(os.MkdirAll(hist, 0o700)).To(Succeed())
		set := []string{"ui.recorder.rotation_interval_hours=0.01", "history.archive.window_hours=1",
			"history.archive.due_after_hours=1", "history.archive.retention_days=0", "history.archive.lock_stale_seconds=0.5"}
		rnd := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 17))

		var all []*child // every child started, for the logs at the end
		archivers := make([]*child, 4)
		start := func(i int) {
			archivers[i] = startChild("loop", shared, "archiver-"+itoa(i), "", set...)
			all = append(all, archivers[i])
		}
		for i := range archivers {
			start(i)
		}

		// The producer: 100 sealed files over five windows, one every
		// 100 ms, each built aside and renamed in after its meta file.
		produced := make(chan []string, 1)
		go func() {
			defer GinkgoRecover()
			var want []string
			for i := range 100 {
				name := sealedName("producer-"+itoa(i%3), day13.Add(8*time.Hour+time.Duration(i)*157*time.Second))
				buildSealed(hist, name, 20)
				want = append(want, taskIDs(name, 20)...)
				time.Sleep(100 * time.Millisecond)
			}
			produced <- want
		}()

		// The chaos loop, until the producer is done.
		var want []string
		kills, pauses := 0, 0
	chaos:
		for {
			select {
			case want = <-produced:
				break chaos
			case <-time.After(time.Duration(150+rnd.IntN(200)) * time.Millisecond):
			}
			i := rnd.IntN(len(archivers))
			if rnd.IntN(2) == 0 {
				kills++
				_ = archivers[i].cmd.Process.Kill()
				archivers[i].wait()
				start(i)
				continue
			}
			pauses++
			archivers[i].pause()
			time.Sleep(time.Duration(200+rnd.IntN(600)) * time.Millisecond)
			Expect(archivers[i].cmd.Process.Signal(syscall.SIGCONT)).To(Succeed())
		}

		// Let the archivers finish every source, then stop them.
		Eventually(func() []string {
			var left []string
			for _, n := range names(hist) {
				if _, ok := archive.FileStart(n); ok {
					left = append(left, n)
				}
			}
			return left
		}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(BeEmpty())
		for _, c := range archivers {
			Expect(c.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
			c.wait()
		}

		By("every event of every sealed source is in exactly one archive")
		var got []string
		for _, n := range names(hist) {
			if strings.HasSuffix(n, ".db.gz") && !strings.HasPrefix(n, ".") {
				got = append(got, readArchive(filepath.Join(hist, n)).tasks...)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		Expect(len(got)).To(Equal(len(want)))
		Expect(got).To(Equal(want))
		Expect(names(hist)).NotTo(ContainElement(HaveSuffix(".unreadable")))

		By("no source was deleted before its archive was durable")
		var events []archive.Event
		for _, c := range all {
			for _, l := range c.wait() {
				if l.Event != nil {
					events = append(events, *l.Event)
				}
			}
		}
		slices.SortStableFunc(events, func(a, b archive.Event) int { return a.At.Compare(b.At) })
		published := map[string]bool{}
		for _, e := range events {
			switch e.Kind {
			case archive.EventPublished:
				published[e.Name] = true
			case archive.EventDeleted:
				Expect(published).To(HaveKey(e.Archive), "%s deleted by %s before %s was published", e.Name, e.Token, e.Archive)
			}
		}

		By("at most one pass that was not fenced held the lock at any moment")
		type span struct {
			from, to time.Time
			fenced   bool
		}
		spans := map[string]*span{}
		for _, e := range events {
			s := spans[e.Token]
			if e.Kind == archive.EventLocked {
				s = &span{from: e.At, to: e.At}
				spans[e.Token] = s
			}
			if s == nil {
				continue // a pass that never took the lock
			}
			s.to = e.At
			s.fenced = s.fenced || e.Kind == archive.EventFenced || e.Fenced
		}
		fenced := 0
		for _, s := range spans {
			if s.fenced {
				fenced++
			}
		}
		GinkgoWriter.Printf("kills %d, pauses %d, passes with the lock %d, fenced %d, events %d\n", kills, pauses, len(spans), fenced, len(events))
		var held []*span
		for _, s := range spans {
			if !s.fenced {
				held = append(held, s)
			}
		}
		Expect(len(held)).To(BeNumerically(">", 1))
		slices.SortFunc(held, func(a, b *span) int { return a.from.Compare(b.from) })
		for i := 1; i < len(held); i++ {
			Expect(held[i].from.Before(held[i-1].to)).To(BeFalse(), "two passes held the lock at once: %v–%v and %v–%v",
				held[i-1].from, held[i-1].to, held[i].from, held[i].to)
		}

		By("no work file outlives the sweep")
		cfg := archive.DefaultConfig()
		for _, kv := range set {
			k, v, _ := strings.Cut(kv, "=")
			Expect(cfg.Set(k, v)).To(Succeed())
		}
		Eventually(func() []string {
			_, err := archive.Pass(GinkgoT().Context(), cfg, archive.Options{Shared: shared, Cluster: "c1", Worker: "sweeper"})
			Expect(err).NotTo(HaveOccurred())
			var dots []string
			for _, n := range names(hist) {
				if strings.HasPrefix(n, ".") {
					dots = append(dots, n)
				}
			}
			return dots
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(BeEmpty())
	})
})
