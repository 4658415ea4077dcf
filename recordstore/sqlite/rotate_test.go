// Specs of caller-named live files (Options.LiveFile), the ledger carried
// from earlier files (Options.CarryFrom) and Rotate.

package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// worker is a store path with caller-named live files beside it, as the
// flight recorder names them.
type worker struct{ dir, path string }

func newWorker() worker {
	dir := filepath.Join(GinkgoT().TempDir(), "storage")
	return worker{dir: dir, path: filepath.Join(dir, "w1.records")}
}

func (w worker) file(stamp string) string { return filepath.Join(w.dir, "w1-"+stamp+".db") }

// fileCount counts rows of a table in the file at path, through a plain
// connection closed at once.
func fileCount(path, q string) int64 {
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	return rawCount(db, q)
}

// tablesOf lists the tables of the file at path, SQLite's own excluded.
func tablesOf(path string) []string {
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var n string
		Expect(rows.Scan(&n)).To(Succeed())
		out = append(out, n)
	}
	return out
}

var _ = Describe("Caller-named live files", func() {
	It("creates exactly the named file, 0600 in a 0700 folder, and nothing at LivePath", func() {
		w := newWorker()
		live := w.file("2030-01-02__03_04_05")
		b := openAt(w.path, sqlite.Options{LiveFile: live})
		Expect(b.LivePath()).To(Equal(live))
		fi, err := os.Stat(live)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		di, err := os.Stat(w.dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(di.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		_, err = os.Stat(sqlite.LivePath(w.path))
		Expect(os.IsNotExist(err)).To(BeTrue(), "no file at LivePath")
		_, err = os.Stat(filepath.Dir(sqlite.LivePath(w.path)))
		Expect(os.IsNotExist(err)).To(BeTrue(), "no v1 folder")
	})

	It("refuses a live file name SQLite would take for its own", func() {
		w := newWorker()
		_, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: w.file("x") + "-wal"})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("refuses more than MaxCarryFrom files to carry from", func() {
		w := newWorker()
		_, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: w.file("x"), CarryFrom: make([]string, sqlite.MaxCarryFrom+1)})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("carries the ledger of an earlier file, so that a batch it applied is not applied again", func() {
		w := newWorker()
		k := eventsKind()
		first, second := w.file("1"), w.file("2")
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		batch := newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"}))
		want := mustBatch(b1, batch)[0]
		epoch1 := b1.Epoch()
		Expect(b1.Close()).To(Succeed())

		b2 := openAt(w.path, sqlite.Options{LiveFile: second, CarryFrom: []string{w.file("missing"), first}})
		Expect(b2.Epoch()).To(BeNumerically(">", epoch1), "the epoch continues above the carried file's")
		declare(b2, k)
		got := mustBatch(b2, batch)[0]
		Expect(got).To(Equal(want), "the recorded result, not a second application")
		Expect(fileCount(second, `SELECT count(*) FROM events`)).To(BeZero())
		Expect(fileCount(first, `SELECT count(*) FROM events`)).To(Equal(int64(1)))
	})

	It("carries the ledger when a read-only backend is promoted", func() {
		w := newWorker()
		k := eventsKind()
		first, second := w.file("1"), w.file("2")
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		batch := newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"}))
		want := mustBatch(b1, batch)[0]
		Expect(b1.Close()).To(Succeed())
		b2, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: second, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		Expect(b2.Close()).To(Succeed())

		ro := openAt(w.path, sqlite.Options{LiveFile: second, ReadOnly: true, CarryFrom: []string{first}})
		Expect(ro.Promote(ctx)).To(Succeed())
		Expect(mustBatch(ro, batch)[0]).To(Equal(want))
		Expect(tablesOf(second)).NotTo(ContainElement("events"), "nothing of the batch was applied again")
	})

	It("skips a sealed file to carry from, and creates no ledger when nothing is carried", func() {
		w := newWorker()
		first, second := w.file("1"), w.file("2")
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		k := eventsKind()
		mustBatch(b1, newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"})))
		Expect(b1.Close()).To(Succeed())
		_, err = sqlite.Seal(ctx, first, nil)
		Expect(err).NotTo(HaveOccurred())

		openAt(w.path, sqlite.Options{LiveFile: second, CarryFrom: []string{first}})
		Expect(tablesOf(second)).NotTo(ContainElement("record_spool_batches"))
		Expect(tablesOf(first)).To(Equal([]string{"events"}), "the sealed file is left as it was")
	})
})

var _ = Describe("Carrying from a file that goes meanwhile", func() {
	It("skips a file removed between its stat and its attach, and never creates it again", func() {
		w := newWorker()
		first, second := w.file("1"), w.file("2")
		b1, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		k := eventsKind()
		mustBatch(b1, newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"})))
		Expect(b1.Close()).To(Succeed())
		moved := filepath.Join(w.dir, "history")
		Expect(os.Mkdir(moved, 0o700)).To(Succeed())
		defer sqlite.SetCarryStatted(func(path string) {
			if path == first { // sealed and moved into the history folder, as the recorder's mover does
				Expect(os.Rename(first, filepath.Join(moved, filepath.Base(first)))).To(Succeed())
			}
		})()

		b2 := openAt(w.path, sqlite.Options{LiveFile: second, CarryFrom: []string{first}})
		Expect(b2.LivePath()).To(Equal(second))
		_, err = os.Stat(first)
		Expect(os.IsNotExist(err)).To(BeTrue(), "no empty file came back under the moved name")
		Expect(tablesOf(second)).NotTo(ContainElement("record_spool_batches"), "nothing was carried")
	})
})

var _ = Describe("Rotate", func() {
	var (
		w      worker
		b      *sqlite.Backend
		k      recordstore.Kind
		first  string
		second string
	)
	BeforeEach(func() {
		w = newWorker()
		first, second = w.file("1"), w.file("2")
		b = openAt(w.path, sqlite.Options{LiveFile: first})
		k = eventsKind()
		declare(b, k)
	})

	It("puts rows before it in the old file and after it in the new one, kinds usable at once", func() {
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
		epoch := b.Epoch()
		old, err := b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		Expect(old).To(Equal(first))
		Expect(b.LivePath()).To(Equal(second))
		Expect(b.Epoch()).To(Equal(epoch))
		res := mustAppend(b, "s", k.Name, recordstore.Row{"name": "after"})
		Expect(res.From).To(Equal(int64(1)), "streams start afresh in the new file")
		Expect(mustScan(b, "s")).To(HaveLen(1))
		Expect(fileCount(first, `SELECT count(*) FROM events WHERE name = 'before'`)).To(Equal(int64(1)))
		Expect(fileCount(first, `SELECT count(*) FROM events WHERE name = 'after'`)).To(BeZero())
		Expect(fileCount(second, `SELECT count(*) FROM events WHERE name = 'after'`)).To(Equal(int64(1)))
		Expect(fileCount(second, `SELECT count(*) FROM events WHERE name = 'before'`)).To(BeZero())
		fi, err := os.Stat(second)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("closes the old file, which seals at once", func() {
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
		_, err := b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		for _, f := range []string{first + "-wal", first + "-shm"} {
			_, err := os.Stat(f)
			Expect(os.IsNotExist(err)).To(BeTrue(), f)
		}
		stats, err := sqlite.Seal(ctx, first, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(stats.Tables).To(Equal(map[string]int64{"events": 1}))
	})

	It("copies the ledger, so that a batch applied before it is not applied again after it", func() {
		batch := newBatch(nil, appendEntry("s", k, recordstore.Row{"name": "once"}))
		want := mustBatch(b, batch)[0]
		_, err := b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		Expect(mustBatch(b, batch)[0]).To(Equal(want))
		got, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
		Expect(fileCount(second, `SELECT count(*) FROM events`)).To(BeZero())
		seq, err := b.ProducerSeq(ctx, batch.Producer.Instance)
		Expect(err).NotTo(HaveOccurred())
		Expect(seq).To(Equal(batch.Producer.Seq))
	})

	It("ends an open Tail, whose stream generation the new file does not hold", func() {
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
		done := make(chan error, 1)
		go func() {
			done <- recordstore.Tail(ctx, b, "s", 1, func(recordstore.Record) error { return nil })
		}()
		Consistently(done).ShouldNot(Receive())
		_, err := b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		Eventually(done).Should(Receive(BeNil()))
	})

	It("moves a change watcher to the new file, so that the old one seals while it runs", func() {
		wctx, cancel := context.WithCancel(ctx)
		changes := make(chan struct{}, 16)
		done := make(chan error, 1)
		go func() {
			done <- b.WatchChanges(wctx, func() { changes <- struct{}{} })
		}()
		DeferCleanup(func() { cancel(); <-done })
		// The watcher reads its first data_version when it starts: append
		// until it reports one.
		Eventually(func() bool {
			mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
			select {
			case <-changes:
				return true
			case <-time.After(300 * time.Millisecond): // three polls
				return false
			}
		}).Should(BeTrue())
		_, err := b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		Eventually(changes).Should(Receive(), "the switch is a change")
		Eventually(func() error { _, err := sqlite.Seal(ctx, first, nil); return err }).Should(Succeed())
		for len(changes) > 0 {
			<-changes
		}
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "after"})
		Eventually(changes).Should(Receive(), "a commit to the new file")
	})

	DescribeTable("refuses, leaving the old file live and unchanged",
		func(target func() string, sentinel error, removed bool) {
			mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
			path := target()
			_, err := b.Rotate(ctx, path)
			Expect(err).To(MatchError(sentinel))
			Expect(b.LivePath()).To(Equal(first))
			Expect(mustScan(b, "s")).To(HaveLen(1))
			mustAppend(b, "s", k.Name, recordstore.Row{"name": "still"})
			if removed {
				_, err := os.Stat(path)
				Expect(os.IsNotExist(err)).To(BeTrue())
			}
		},
		Entry("the live file itself", func() string { return first }, recordstore.ErrInvalid, false),
		Entry("a file that is not empty", func() string {
			Expect(os.WriteFile(second, []byte("data"), 0o600)).To(Succeed())
			return second
		}, recordstore.ErrInvalid, false),
		Entry("a name SQLite would take for its own", func() string { return second + "-shm" }, recordstore.ErrInvalid, true),
	)

	It("removes the new file it created when it fails half way, the old one staying live", func() {
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "before"})
		cctx, cancel := context.WithCancel(ctx)
		cancel() // the file is created before the first query notices
		_, err := b.Rotate(cctx, second)
		Expect(err).To(MatchError(context.Canceled))
		Expect(second).NotTo(BeAnExistingFile())
		Expect(b.LivePath()).To(Equal(first))
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "still"})
		Expect(mustScan(b, "s")).To(HaveLen(2))
	})

	It("is refused by a read-only backend", func() {
		ro := openAt(w.path, sqlite.Options{LiveFile: first, ReadOnly: true})
		_, err := ro.Rotate(ctx, second)
		Expect(err).To(MatchError(recordstore.ErrReadOnly))
		_, err = os.Stat(second)
		Expect(os.IsNotExist(err)).To(BeTrue())
	})
})
