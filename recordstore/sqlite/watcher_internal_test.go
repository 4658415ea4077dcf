// Specs of the change probe: what changes its fingerprint, and that a
// read-only backend follows the file without a SQLite connection of its own.

package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// openFiles counts this process's file descriptors on path (Linux only).
func openFiles(path string) int {
	ents, err := os.ReadDir("/proc/self/fd")
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && t == path {
			n++
		}
	}
	return n
}

var _ = Describe("change probe", func() {
	ctx := context.Background()
	var (
		path string // the store's configured path
		live string // its live file
		w    *Backend
	)
	ev := recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}}
	appendOne := func(v string) {
		_, err := w.Append(ctx, "s", "ev", []recordstore.Row{{"v": v}})
		Expect(err).NotTo(HaveOccurred())
	}
	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		var err error
		w, err = Open(ctx, path, Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = w.Close() })
		live = w.LivePath()
		_, err = w.DeclareKind(ctx, ev)
		Expect(err).NotTo(HaveOccurred())
	})

	It("sees every commit on whichever reader it polls, a new reader counting as a change", func() {
		appendOne("first")
		// A poll waits one interval for a free connection, and the poll that
		// meets the pool's second one waits for SQLite to open it: under
		// the race detector on a busy machine that took over 5 ms.
		ro, err := Open(ctx, path, Options{ReadOnly: true, ReadConns: 2, ChangeInterval: 500 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = ro.Close() })
		ro.stopFeed() // this spec polls by hand
		wt, err := ro.reopenWatcher(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(wt.seen).To(HaveLen(1), "the pool's first connection")

		moved, err := ro.poll(ctx, wt)
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(BeFalse(), "no commit, no change")

		// Hold the known connection: the next poll gets the pool's second,
		// new to the watcher, and counts it as a change.
		held, err := ro.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		moved, err = ro.poll(ctx, wt)
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(BeTrue(), "a connection never read before")
		Expect(wt.seen).To(HaveLen(2))

		// Both busy: the poll gives up after one interval, reporting nothing.
		other, err := ro.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		moved, err = ro.poll(ctx, wt)
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(BeFalse())
		Expect(other.Close()).To(Succeed())
		Expect(held.Close()).To(Succeed())

		// A commit shows on whichever connection the next polls get, and
		// once only on each.
		appendOne("second")
		pollTwice := func() {
			moved, err := ro.poll(ctx, wt)
			Expect(err).NotTo(HaveOccurred())
			Expect(moved).To(BeTrue())
			moved, err = ro.poll(ctx, wt)
			Expect(err).NotTo(HaveOccurred())
			Expect(moved).To(BeFalse(), "seen already on this connection")
		}
		a, err := ro.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		b, err := ro.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Close()).To(Succeed())
		pollTwice() // on a, b held
		a, err = ro.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Close()).To(Succeed())
		pollTwice() // on b, a held
		Expect(a.Close()).To(Succeed())
		for range 4 {
			moved, err = ro.poll(ctx, wt)
			Expect(err).NotTo(HaveOccurred())
			Expect(moved).To(BeFalse(), "each connection has read the commit")
		}

		Expect(ro.Close()).To(Succeed())
		_, err = ro.poll(ctx, wt)
		Expect(err).To(MatchError(recordstore.ErrClosed))
	})

	It("lets a read-only backend follow the file on its one reader connection", func() {
		if runtime.GOOS != "linux" {
			Skip("counts descriptors in /proc/self/fd")
		}
		before := openFiles(live)
		ro, err := Open(ctx, path, Options{ReadOnly: true, ReadConns: 1, ChangeInterval: 5 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = ro.Close() })
		Expect(openFiles(live)-before).To(Equal(1), "the reader pool's one connection, and no watcher's")

		// A kind declared by the writer is picked up by the feed, and a
		// follower is woken by an append.
		_, err = w.DeclareKind(ctx, recordstore.Kind{Name: "later", Columns: []recordstore.Column{{Name: "n", Type: recordstore.TypeInteger}}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []string {
			ks, err := ro.Kinds(ctx)
			Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, k := range ks {
				names = append(names, k.Name)
			}
			return names
		}).Should(ContainElement("later"))
		woken := ro.Notifier().Changed("s")
		appendOne("y")
		Eventually(woken).Should(BeClosed())
	})

	It("keeps no goroutine per read-only backend while the feed waits between polls", func() {
		const n = 16
		settled := func() int {
			runtime.GC()
			return runtime.NumGoroutine()
		}
		before := settled()
		for range n {
			ro, err := Open(ctx, path, Options{ReadOnly: true, ReadConns: 1, ChangeInterval: time.Hour})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = ro.Close() })
		}
		// database/sql keeps one goroutine per pool (its connection
		// opener); the feeds add none while they wait.
		Eventually(settled).Should(BeNumerically("<=", before+n))
	})
})
