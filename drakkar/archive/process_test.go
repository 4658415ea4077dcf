// Specs with real archiver processes: a holder paused past
// lock_stale_seconds is fenced, a pass killed at each crash point is
// recovered by the next one, and files written the way drakkar's Python
// tools write them are archived and folded.

package archive_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

var _ = Describe("Archiver processes", Label("integration"), func() {
	var shared, hist string
	var cfg archive.Config
	// set is cfg for a child: one-hour windows due an hour after they
	// end (the October files are long due), a lock stale after 0.3 s.
	set := []string{"ui.recorder.rotation_interval_hours=0.01", "history.archive.window_hours=1",
		"history.archive.due_after_hours=1", "history.archive.retention_days=0", "history.archive.lock_stale_seconds=0.3"}
	final := "c1-2026-10-13_08-00__2026-10-13_09-00.db.gz"

	BeforeEach(func() {
		shared = GinkgoT().TempDir()
		hist = filepath.Join(shared, "history", "c1")
		Expect(os.MkdirAll(hist, 0o700)).To(Succeed())
		cfg = archive.DefaultConfig()
		for _, kv := range set {
			k, v, _ := strings.Cut(kv, "=")
			Expect(cfg.Set(k, v)).To(Succeed())
		}
	})

	// sources builds n sealed files of the 08:00 window and returns every
	// task id they hold.
	sources := func(n, events int) []string {
		var want []string
		for i := range n {
			name := sealedName("w-"+itoa(i), day13.Add(8*time.Hour+time.Duration(i)*time.Minute))
			buildSealed(hist, name, events)
			want = append(want, taskIDs(name, events)...)
		}
		sort.Strings(want)
		return want
	}
	// passUntilLocked runs passes in this process until one takes the
	// lock (a dead or paused holder's lock goes stale after 0.3 s).
	passUntilLocked := func() archive.Report {
		var rep archive.Report
		var errs []error
		Eventually(func() bool {
			var err error
			rep, err = archive.Pass(context.Background(), cfg, archive.Options{Shared: shared, Cluster: "c1", Worker: "me"})
			if err != nil {
				errs = append(errs, err)
			}
			return rep.Locked
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(BeTrue())
		Expect(errs).To(BeEmpty())
		return rep
	}
	// settle runs passes until the sweep has removed every work file.
	settle := func() {
		Eventually(func() []string {
			passUntilLocked()
			var dots []string
			for _, n := range names(hist) {
				if strings.HasPrefix(n, ".") {
					dots = append(dots, n)
				}
			}
			return dots
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeEmpty())
	}

	It("fences a holder paused past lock_stale_seconds: resumed, it publishes nothing and deletes nothing", func() {
		want := sources(3, 20)
		holder := startChild("pass", shared, "paused", archive.FailAfterGzip+":wait", set...)
		holder.next(func(l childLine) bool { return l.Failpoint != "" })
		holder.pause()
		holder.resume() // read once it runs again

		rep := passUntilLocked()
		Expect(holder.state()).To(Equal("T"), "still paused")
		Expect(rep.Published).To(HaveLen(1), "%+v", rep)
		Expect(rep.Deleted).To(HaveLen(3))

		Expect(holder.cmd.Process.Signal(syscall.SIGCONT)).To(Succeed())
		lines := holder.wait()
		got := report(lines)
		Expect(got.Fenced).To(BeTrue())
		Expect(got.Published).To(BeEmpty())
		Expect(got.Deleted).To(BeEmpty())
		Expect(readArchive(filepath.Join(hist, final)).tasks).To(Equal(want))
		settle()
		Expect(names(hist)).To(ConsistOf(final))
	})

	DescribeTable("a pass killed at a crash point is recovered by the next one, without losing or duplicating an event",
		func(failpoint string) {
			want := sources(4, 25)
			killed := startChild("pass", shared, "killed", failpoint+":kill", set...)
			lines := killed.wait()
			Expect(killed.cmd.ProcessState.Sys().(syscall.WaitStatus).Signal()).To(Equal(syscall.SIGKILL))
			Expect(lines).NotTo(ContainElement(HaveField("Report", Not(BeNil()))))

			settle()
			Expect(readArchive(filepath.Join(hist, final)).tasks).To(Equal(want))
			Expect(names(hist)).To(ConsistOf(final))
		},
		Entry("after the gzip", archive.FailAfterGzip),
		Entry("after the rename", archive.FailAfterPublish),
		Entry("half way through the deletes", archive.FailMidDeletes),
	)

	It("archives sealed files written with plain SQL, and folds a Python-style archive whose merged file has a WAL header", func() {
		covered := buildSealed(hist, sealedName("py-worker", day13.Add(8*time.Hour)), 6)
		fresh := buildSealed(hist, sealedName("py-worker", day13.Add(8*time.Hour+30*time.Minute)), 4)
		pyArchive := pythonArchive(filepath.Base(covered), 6)
		Expect(os.WriteFile(filepath.Join(hist, final), pyArchive, 0o600)).To(Succeed())

		rep := passUntilLocked()
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.Published[0].Folded).To(BeTrue())
		Expect(rep.Deleted).To(ConsistOf(filepath.Base(covered), filepath.Base(fresh)))
		got := readArchive(filepath.Join(hist, final))
		want := append(pyTasks(6), taskIDs(filepath.Base(fresh), 4)...)
		sort.Strings(want)
		Expect(got.tasks).To(Equal(want))
		Expect(got.sources).To(Equal([]string{filepath.Base(covered), filepath.Base(fresh)}))
		header, err := os.ReadFile(gunzipTo(filepath.Join(hist, final)))
		Expect(err).NotTo(HaveOccurred())
		Expect(header[18:20]).To(Equal([]byte{1, 1}))
		Expect(names(hist)).To(ConsistOf(final))
	})
})

// pyTasks are the task ids of pythonArchive's events.
func pyTasks(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = "py/t" + itoa(i)
	}
	return out
}

// pythonArchive builds what drakkar's Python merge leaves: a merged file
// (plain SQL, the merged DDL) left in WAL mode, covering source with n
// events, gzip-compressed.
func pythonArchive(source string, n int) []byte {
	path := filepath.Join(GinkgoT().TempDir(), "py-merged.db")
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	db.SetMaxOpenConns(1)
	for _, s := range append([]string{"PRAGMA journal_mode=WAL"}, dbfiles.MergedDDL...) {
		_, err := db.Exec(s)
		Expect(err).NotTo(HaveOccurred(), s)
	}
	_, err = db.Exec(`INSERT INTO workers (id, worker_name, cluster_name, source_file) VALUES (1, 'py-worker', 'c1', ?)`, source)
	Expect(err).NotTo(HaveOccurred())
	for i := range n {
		_, err = db.Exec(`INSERT INTO events (worker_id, ts, dt, event, task_id) VALUES (1, ?, '2026-10-13 08:00:00.000', 'task_completed', ?)`,
			1760342400+float64(i), "py/t"+itoa(i))
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(db.Close()).To(Succeed())
	raw, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(raw[18:20]).To(Equal([]byte{2, 2}), "a WAL header, as Python leaves it")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(raw)
	Expect(err).NotTo(HaveOccurred())
	Expect(zw.Close()).To(Succeed())
	return buf.Bytes()
}
