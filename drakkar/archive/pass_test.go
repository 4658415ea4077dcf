// Specs of one pass in this process: publish and delete, fold, a corrupt
// archive, unreadable sources, the sweep, expiry, the lock's body and
// takeover, fencing, metrics and the start-up lines.

package archive_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

var _ = Describe("Pass", func() {
	var shared, hist string
	var cfg archive.Config
	var now time.Time
	var logs *bytes.Buffer
	var met *archive.Metrics
	var reg *prometheus.Registry

	BeforeEach(func() {
		shared = GinkgoT().TempDir()
		hist = filepath.Join(shared, "history", "c1")
		Expect(os.MkdirAll(hist, 0o700)).To(Succeed())
		cfg = testConfig()
		now = day13.Add(10*time.Hour + 30*time.Minute) // 08:00-09:00 is due, 09:00-10:00 is not
		logs = &bytes.Buffer{}
		reg = prometheus.NewRegistry()
		met = archive.NewMetrics(reg)
	})

	opts := func() archive.Options {
		return archive.Options{Shared: shared, Cluster: "c1", Worker: "w1", Clock: fixedClock(now),
			Logger: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: met}
	}
	pass := func(o archive.Options) archive.Report {
		rep, err := archive.Pass(context.Background(), cfg, o)
		Expect(err).NotTo(HaveOccurred())
		return rep
	}
	at := func(h, m int) time.Time { return day13.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	final := "c1-2026-10-13_08-00__2026-10-13_09-00.db.gz"

	It("merges a due window into one archive, publishes it, then deletes its sources and their meta files", func() {
		var want []string
		for _, m := range []int{0, 20, 40} {
			name := sealedName("search-worker-3", at(8, m))
			buildSealed(hist, name, 50)
			want = append(want, taskIDs(name, 50)...)
		}
		late := sealedName("w2", at(9, 0))
		buildSealed(hist, late, 5)

		rep := pass(opts())
		Expect(rep.Locked).To(BeTrue())
		Expect(rep.Fenced).To(BeFalse())
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.Published[0].Archive).To(Equal(final))
		Expect(rep.Published[0].Sources).To(Equal(3))
		Expect(rep.Published[0].Events).To(Equal(int64(150)))
		Expect(rep.Deleted).To(HaveLen(3))
		sort.Strings(want)
		Expect(readArchive(filepath.Join(hist, final)).tasks).To(Equal(want))
		Expect(names(hist)).To(ConsistOf(final, late, late+".meta.json"))
		fi, err := os.Stat(filepath.Join(hist, final))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		header, err := os.ReadFile(gunzipTo(filepath.Join(hist, final)))
		Expect(err).NotTo(HaveOccurred())
		Expect(header[18:20]).To(Equal([]byte{1, 1}), "a rollback journal in the header")
		Expect(logs.String()).To(ContainSubstring("recorder_archive_published"))
	})

	It("folds an archive already at the final name: the sources it covers are deleted, never merged twice", func() {
		a := buildSealed(hist, sealedName("w1", at(8, 0)), 10)
		b := buildSealed(hist, sealedName("w1", at(8, 30)), 10)
		keepA, err := os.ReadFile(a)
		Expect(err).NotTo(HaveOccurred())
		keepB, err := os.ReadFile(b)
		Expect(err).NotTo(HaveOccurred())
		pass(opts())
		// A pass that died after publishing left its sources behind.
		Expect(os.WriteFile(a, keepA, 0o600)).To(Succeed())
		Expect(os.WriteFile(b, keepB, 0o600)).To(Succeed())
		c := buildSealed(hist, sealedName("w2", at(8, 45)), 7)

		rep := pass(opts())
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.Published[0].Folded).To(BeTrue())
		Expect(rep.Published[0].Sources).To(Equal(1))
		Expect(rep.Deleted).To(ConsistOf(filepath.Base(c), filepath.Base(a), filepath.Base(b)))
		got := readArchive(filepath.Join(hist, final))
		want := append(append(taskIDs(filepath.Base(a), 10), taskIDs(filepath.Base(b), 10)...), taskIDs(filepath.Base(c), 7)...)
		sort.Strings(want)
		Expect(got.tasks).To(Equal(want))
		Expect(got.sources).To(Equal([]string{filepath.Base(a), filepath.Base(b), filepath.Base(c)}))
		Expect(names(hist)).To(ConsistOf(final))
	})

	It("folds an archive in a shared folder named with '#', '?' and '%', as healthy as anywhere else", func() {
		shared = filepath.Join(GinkgoT().TempDir(), "a #?%b")
		hist = filepath.Join(shared, "history", "c1")
		a := buildSealed(hist, sealedName("w1", at(8, 0)), 10)
		first := pass(opts())
		Expect(first.Published).To(HaveLen(1))
		b := buildSealed(hist, sealedName("w2", at(8, 30)), 4)

		rep := pass(opts())
		Expect(rep.Failed).To(BeEmpty())
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.Published[0].Folded).To(BeTrue())
		Expect(rep.Deleted).To(ConsistOf(filepath.Base(b)))
		want := append(taskIDs(filepath.Base(a), 10), taskIDs(filepath.Base(b), 4)...)
		sort.Strings(want)
		Expect(readArchive(filepath.Join(hist, final)).tasks).To(Equal(want))
		Expect(names(hist)).To(ConsistOf(final))
		Expect(names(filepath.Dir(shared))).To(ConsistOf("a #?%b"), "nothing opened beside the shared folder")
	})

	It("deletes sources an archive covers without publishing again when nothing new is due", func() {
		a := buildSealed(hist, sealedName("w1", at(8, 0)), 10)
		keep, err := os.ReadFile(a)
		Expect(err).NotTo(HaveOccurred())
		pass(opts())
		before, err := os.ReadFile(filepath.Join(hist, final))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(a, keep, 0o600)).To(Succeed())
		rep := pass(opts())
		Expect(rep.Published).To(BeEmpty())
		Expect(rep.Deleted).To(Equal([]string{filepath.Base(a)}))
		after, err := os.ReadFile(filepath.Join(hist, final))
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before))
	})

	It("stalls only the window whose final name holds a corrupt file, leaving its sources untouched", func() {
		a := buildSealed(hist, sealedName("w1", at(8, 0)), 10)
		other := buildSealed(hist, sealedName("w1", at(7, 0)), 3)
		Expect(os.WriteFile(filepath.Join(hist, final), []byte("junk, not gzip"), 0o600)).To(Succeed())
		rep := pass(opts())
		Expect(rep.Failed).To(HaveLen(1))
		Expect(rep.Failed[0].Archive).To(Equal(final))
		Expect(rep.Failed[0].Error).To(ContainSubstring(archive.ErrCorruptArchive.Error()))
		Expect(a).To(BeAnExistingFile())
		Expect(a + ".meta.json").To(BeAnExistingFile())
		Expect(other).NotTo(BeAnExistingFile(), "the other window is archived")
		Expect(os.ReadFile(filepath.Join(hist, final))).To(Equal([]byte("junk, not gzip")))
		Expect(metricValue(reg, "drakkar_recorder_archive_failures_total")).To(Equal(1.0))
		Expect(logs.String()).To(ContainSubstring("recorder_archive_failed"))
		Expect(names(hist)).NotTo(ContainElement(HavePrefix(".")))
	})

	It("sets an unreadable source aside as <name>.unreadable, never deleting or merging it again", func() {
		good := buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		bad := filepath.Join(hist, sealedName("w9", at(8, 10)))
		Expect(os.WriteFile(bad, []byte("not a database at all"), 0o600)).To(Succeed())
		rep := pass(opts())
		Expect(rep.SetAside).To(Equal([]string{filepath.Base(bad)}))
		Expect(rep.Deleted).To(Equal([]string{filepath.Base(good)}))
		Expect(os.ReadFile(bad + ".unreadable")).To(Equal([]byte("not a database at all")))
		Expect(readArchive(filepath.Join(hist, final)).sources).To(Equal([]string{filepath.Base(good)}))
		rep = pass(opts())
		Expect(rep.SetAside).To(BeEmpty())
		Expect(bad + ".unreadable").To(BeAnExistingFile())
	})

	It("sweeps leftovers older than lock_stale_seconds with their sidecars, keeping fresh ones and a fresh orphan meta file", func() {
		old := []string{".0123456789abcdef.merge.db", ".0123456789abcdef.merge.db-journal", ".x.db.gz.0123456789abcdef.tmp",
			".0123456789abcdef.previous.db", ".0123456789abcdef.previous.db-wal", ".w1-2026-10-13__08_00_00.db.fedcba9876543210.incoming",
			".clock.fedcba9876543210", ".archive.lock.stale.fedcba9876543210", ".a.db.0011223344556677.src.tmp-shm",
			"w1-2026-10-13__09_30_00.db.meta.json"}
		fresh := []string{".1123456789abcdef.merge.db", ".w2-2026-10-13__08_00_00.db.fedcba9876543210.incoming",
			"w1-2026-10-13__09_40_00.db.meta.json"}
		keep := []string{".hidden-by-an-operator", "notes.txt", "w1-2026-10-13__09_50_00.db.unreadable"}
		for _, n := range append(append(append([]string{}, old...), fresh...), keep...) {
			Expect(os.WriteFile(filepath.Join(hist, n), []byte("x"), 0o600)).To(Succeed())
		}
		for _, n := range append(old, keep...) {
			Expect(os.Chtimes(filepath.Join(hist, n), now.Add(-time.Hour), now.Add(-time.Hour))).To(Succeed())
		}
		for _, n := range fresh {
			Expect(os.Chtimes(filepath.Join(hist, n), now.Add(-time.Second), now.Add(-time.Second))).To(Succeed())
		}
		rep := pass(opts())
		Expect(rep.Swept).To(ConsistOf(old))
		Expect(names(hist)).To(ConsistOf(append(fresh, keep...)))
		Expect(logs.String()).To(ContainSubstring("recorder_archive_temp_swept"))
	})

	It("expires archives past retention_days and merge results past merged_retention_days, on the pass's clock", func() {
		cfg.Retention = 3 * time.Hour
		cfg.MergedRetention = 24 * time.Hour
		oldA := archive.WindowOf(now.Add(-5*time.Hour), time.Hour).ArchiveName("c1")
		keptA := archive.WindowOf(now.Add(-2*time.Hour), time.Hour).ArchiveName("c1")
		foreign := archive.WindowOf(now.Add(-5*time.Hour), time.Hour).ArchiveName("c2")
		for _, n := range []string{oldA, keptA, foreign} {
			Expect(os.WriteFile(filepath.Join(hist, n), []byte("gz"), 0o600)).To(Succeed())
		}
		merged := filepath.Join(shared, "merged")
		Expect(os.MkdirAll(merged, 0o700)).To(Succeed())
		oldM, newM := filepath.Join(merged, "merged-a.db"), filepath.Join(merged, "merged-b.db")
		for _, p := range []string{oldM, newM} {
			Expect(os.WriteFile(p, []byte("db"), 0o600)).To(Succeed())
		}
		Expect(os.Chtimes(oldM, now.Add(-25*time.Hour), now.Add(-25*time.Hour))).To(Succeed())
		Expect(os.Chtimes(newM, now.Add(-23*time.Hour), now.Add(-23*time.Hour))).To(Succeed())

		rep := pass(opts())
		Expect(rep.Expired).To(Equal([]string{oldA}))
		Expect(rep.Pruned).To(Equal([]string{"merged-a.db"}))
		Expect(names(hist)).To(ConsistOf(keptA, foreign))
		Expect(names(merged)).To(ConsistOf("merged-b.db"))
		Expect(rep.ArchiveFiles).To(Equal(1), "counted after the pass: c1's archives only, the expired one gone")
		Expect(metricValue(reg, "drakkar_recorder_archive_files")).To(Equal(1.0))
		Expect(metricValue(reg, "drakkar_recorder_archive_bytes")).To(Equal(2.0))
		Expect(logs.String()).To(ContainSubstring("recorder_merged_pruned"))

		cfg.Retention, cfg.MergedRetention = 0, 0
		rep = pass(opts())
		Expect(rep.Expired).To(BeEmpty())
		Expect(rep.Pruned).To(BeEmpty())
	})

	It("skips the tick when another pass holds a fresh lock, after refreshing the metrics", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		Expect(os.WriteFile(filepath.Join(hist, "c1-2026-10-12_08-00__2026-10-12_09-00.db.gz"), []byte("12345"), 0o600)).To(Succeed())
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T10:29:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Second), now.Add(-time.Second))).To(Succeed())
		rep := pass(opts())
		Expect(rep.Locked).To(BeFalse())
		Expect(rep.Published).To(BeEmpty())
		Expect(metricValue(reg, "drakkar_recorder_archive_bytes")).To(Equal(5.0))
		Expect(os.ReadFile(lockPath)).To(ContainSubstring("bbbbbbbbbbbbbbbb"))
	})

	It("names the holder of the fresh lock it did not take", func() {
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T10:29:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Second), now.Add(-time.Second))).To(Succeed())
		rep := pass(opts())
		Expect(rep.Locked).To(BeFalse())
		Expect(rep.Holder).To(Equal(&archive.Holder{Worker: "w2", Instance: "aaaaaaaaaaaaaaaa", Token: "bbbbbbbbbbbbbbbb",
			AcquiredAt: at(10, 29)}))
		Expect(rep.NextDue).To(BeNil(), "it did not look at the windows")
	})

	It("says when the next window is due when nothing is due yet", func() {
		buildSealed(hist, sealedName("w1", at(9, 20)), 2)
		rep := pass(opts())
		Expect(rep.Locked).To(BeTrue())
		Expect(rep.Published).To(BeEmpty())
		Expect(rep.Holder).To(BeNil())
		Expect(rep.NextDue).NotTo(BeNil())
		Expect(*rep.NextDue).To(Equal(at(11, 0)), "09:00-10:00 is due an hour after it ends")
	})

	It("says when the window of now is due when the folder holds no sealed file", func() {
		rep := pass(opts())
		Expect(rep.NextDue).NotTo(BeNil())
		Expect(*rep.NextDue).To(Equal(at(12, 0)))
	})

	It("reports the archive counts as the pass leaves the folder, not as it found it", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		rep := pass(opts())
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.ArchiveFiles).To(Equal(1))
		Expect(rep.ArchiveBytes).To(Equal(rep.Published[0].SizeBytes))
		Expect(metricValue(reg, "drakkar_recorder_archive_files")).To(Equal(1.0))
	})

	It("logs the folder once in each lock event", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T08:00:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Minute), now.Add(-time.Minute))).To(Succeed())
		pass(opts())
		var seen int
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if strings.Contains(line, "recorder_archive_lock_taken_over") {
				seen++
				Expect(strings.Count(line, `"folder":`)).To(Equal(1), line)
			}
		}
		Expect(seen).To(Equal(1))
	})

	It("takes over a lock older than lock_stale_seconds and deletes its own lock at the end", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T08:00:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Minute), now.Add(-time.Minute))).To(Succeed())
		var events []archive.Event
		o := opts()
		o.OnEvent = func(e archive.Event) { events = append(events, e) }
		rep := pass(o)
		Expect(rep.Locked).To(BeTrue())
		Expect(rep.Published).To(HaveLen(1))
		Expect(events[0].Kind).To(Equal(archive.EventTakenOver))
		Expect(events[0].Name).To(Equal("bbbbbbbbbbbbbbbb"))
		Expect(logs.String()).To(ContainSubstring("recorder_archive_lock_taken_over"))
		Expect(names(hist)).To(ConsistOf(final))
	})

	It("puts back a fresh lock it moved aside in a double takeover, and stands down", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T08:00:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Minute), now.Add(-time.Minute))).To(Succeed())
		faster := []byte(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"cccccccccccccccc","token":"dddddddddddddddd","worker":"w3"}`)
		o := opts()
		calls := 0
		o.Clock = func(context.Context, string) (time.Time, error) {
			// The second reading comes after our look at the stale lock:
			// before our rename, a faster pass took it over and created
			// its own.
			if calls++; calls == 2 {
				Expect(os.Remove(lockPath)).To(Succeed())
				Expect(os.WriteFile(lockPath, faster, 0o600)).To(Succeed())
			}
			return now, nil
		}
		rep := pass(o)
		Expect(rep.Locked).To(BeFalse())
		Expect(calls).To(Equal(2), "it went as far as the takeover")
		Expect(os.ReadFile(lockPath)).To(Equal(faster))
		Expect(logs.String()).NotTo(ContainSubstring("recorder_archive_lock_put_back_failed"))
		Expect(logs.String()).NotTo(ContainSubstring("recorder_archive_lock_taken_over"))
		Expect(names(hist)).NotTo(ContainElement(HavePrefix(".archive.lock.stale.")))
		Expect(filepath.Join(hist, final)).NotTo(BeAnExistingFile())
	})

	It("logs recorder_archive_lock_put_back_failed when a third lock appeared before the put-back, and stands down", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		lockPath := filepath.Join(hist, ".archive.lock")
		Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T08:00:00.000000Z","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"w2"}`), 0o600)).To(Succeed())
		Expect(os.Chtimes(lockPath, now.Add(-time.Minute), now.Add(-time.Minute))).To(Succeed())
		faster := []byte(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"cccccccccccccccc","token":"dddddddddddddddd","worker":"w3"}`)
		third := []byte(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"eeeeeeeeeeeeeeee","token":"ffffffffffffffff","worker":"w4"}`)
		var events []archive.Event
		o := opts()
		o.OnEvent = func(e archive.Event) { events = append(events, e) }
		calls := 0
		o.Clock = func(context.Context, string) (time.Time, error) {
			if calls++; calls == 2 {
				Expect(os.Remove(lockPath)).To(Succeed())
				Expect(os.WriteFile(lockPath, faster, 0o600)).To(Succeed())
			}
			return now, nil
		}
		o.Failpoint = func(name string) {
			if name == archive.FailTakeoverMoved {
				Expect(os.WriteFile(lockPath, third, 0o600)).To(Succeed())
			}
		}
		rep := pass(o)
		Expect(rep.Locked).To(BeFalse())
		Expect(os.ReadFile(lockPath)).To(Equal(third))
		Expect(logs.String()).To(ContainSubstring("recorder_archive_lock_put_back_failed"))
		Expect(events).To(ConsistOf(HaveField("Kind", archive.EventPutBackFailed)))
		Expect(events[0].Name).To(Equal("dddddddddddddddd"))
		Expect(names(hist)).NotTo(ContainElement(HavePrefix(".archive.lock.stale.")))
	})

	It("refreshes the lock's modification time while it holds it, and never a lock another pass took", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		lockPath := filepath.Join(hist, ".archive.lock")
		old := time.Now().Add(-time.Hour)
		mtime := func() time.Time {
			fi, err := os.Stat(lockPath)
			Expect(err).NotTo(HaveOccurred())
			return fi.ModTime()
		}
		o := opts()
		o.RefreshEvery = 10 * time.Millisecond
		o.Failpoint = func(name string) {
			if name != archive.FailAfterLock {
				return
			}
			Expect(os.Chtimes(lockPath, old, old)).To(Succeed())
			Eventually(mtime).Should(BeTemporally(">", old.Add(30*time.Minute)))
			Expect(os.WriteFile(lockPath, []byte(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"cccccccccccccccc","token":"dddddddddddddddd","worker":"w3"}`), 0o600)).To(Succeed())
			Expect(os.Chtimes(lockPath, old, old)).To(Succeed())
			Consistently(mtime, "100ms", "10ms").Should(BeTemporally("==", old))
		}
		rep := pass(o)
		Expect(rep.Fenced).To(BeTrue())
		Expect(rep.Published).To(BeEmpty())
	})

	It("writes the lock's canonical body, 0600, while it runs", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		var body []byte
		var mode os.FileMode
		o := opts()
		o.Instance = "9c41e0b27fd34a1e"
		o.Worker = "search-worker-3"
		o.Failpoint = func(name string) {
			if name == archive.FailAfterLock {
				p := filepath.Join(hist, ".archive.lock")
				body, _ = os.ReadFile(p)
				fi, err := os.Stat(p)
				Expect(err).NotTo(HaveOccurred())
				mode = fi.Mode().Perm()
			}
		}
		rep := pass(o)
		want, err := dbfiles.EncodeLock(dbfiles.LockBody{AcquiredAt: now, Instance: "9c41e0b27fd34a1e", Token: rep.Token, Worker: "search-worker-3"})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(body)).To(Equal(string(want)))
		Expect(string(body)).To(Equal(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"9c41e0b27fd34a1e","token":"` + rep.Token + `","worker":"search-worker-3"}`))
		Expect(mode).To(Equal(os.FileMode(0o600)))
	})

	DescribeTable("a pass whose lock is taken over publishes nothing and deletes nothing from then on",
		func(at string, wantPublished int) {
			a := buildSealed(hist, sealedName("w1", day13.Add(8*time.Hour)), 4)
			b := buildSealed(hist, sealedName("w1", day13.Add(8*time.Hour+time.Minute)), 4)
			o := opts()
			o.Failpoint = func(name string) {
				if name == at {
					Expect(os.WriteFile(filepath.Join(hist, ".archive.lock"),
						[]byte(`{"acquired_at":"2026-10-13T10:30:00.000000Z","instance":"cccccccccccccccc","token":"dddddddddddddddd","worker":"w3"}`), 0o600)).To(Succeed())
				}
			}
			rep := pass(o)
			Expect(rep.Fenced).To(BeTrue())
			Expect(rep.Published).To(HaveLen(wantPublished))
			Expect(len(rep.Deleted)).To(BeNumerically("<=", 1))
			if wantPublished == 0 {
				Expect(filepath.Join(hist, final)).NotTo(BeAnExistingFile())
				Expect(a).To(BeAnExistingFile())
				Expect(b).To(BeAnExistingFile())
			}
			Expect(os.ReadFile(filepath.Join(hist, ".archive.lock"))).To(ContainSubstring("dddddddddddddddd"))
			Expect(metricValue(reg, "drakkar_recorder_archive_failures_total")).To(Equal(1.0))
			Expect(logs.String()).To(ContainSubstring("recorder_archive_fenced"))
		},
		Entry("before publishing", archive.FailAfterGzip, 0),
		Entry("before the deletes", archive.FailAfterPublish, 1),
		Entry("half way through the deletes", archive.FailMidDeletes, 1),
	)

	It("publishes nothing over an archive that appeared at the final name while it merged, leaving its sources", func() {
		a := buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		o := opts()
		o.Failpoint = func(name string) {
			if name == archive.FailAfterGzip {
				Expect(os.WriteFile(filepath.Join(hist, final), []byte("someone else's"), 0o600)).To(Succeed())
			}
		}
		rep := pass(o)
		Expect(rep.Published).To(BeEmpty())
		Expect(rep.Failed).To(HaveLen(1))
		Expect(rep.Failed[0].Error).To(ContainSubstring(archive.ErrArchiveAppeared.Error()))
		Expect(os.ReadFile(filepath.Join(hist, final))).To(Equal([]byte("someone else's")))
		Expect(a).To(BeAnExistingFile())
		Expect(names(hist)).NotTo(ContainElement(HavePrefix(".")))
	})

	It("reads now from the file server: the modification time of a touched .clock.<instance> marker, removed at the end", func() {
		clock := archive.FileServerClock("0123456789abcdef")
		got, err := clock(context.Background(), hist)
		Expect(err).NotTo(HaveOccurred())
		fi, err := os.Stat(filepath.Join(hist, ".clock.0123456789abcdef"))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeTemporally("==", fi.ModTime()))
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		past := fi.ModTime().Add(-time.Hour)
		Expect(os.Chtimes(filepath.Join(hist, fi.Name()), past, past)).To(Succeed())
		again, err := clock(context.Background(), hist)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeTemporally(">", past.Add(30*time.Minute)), "touched again")

		o := opts()
		o.Clock = nil
		o.Instance = "fedcba9876543210"
		pass(o)
		Expect(names(hist)).NotTo(ContainElement(".clock.fedcba9876543210"))
	})

	It("does nothing with archiving off, and says so at start", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		cfg.Enabled = false
		rep := pass(opts())
		Expect(rep.Locked).To(BeFalse())
		Expect(names(hist)).To(HaveLen(2))
		log := slog.New(slog.NewJSONHandler(logs, nil))
		archive.LogStart(log, cfg, hist)
		Expect(logs.String()).To(ContainSubstring(`"msg":"recorder_archiving_disabled","folder":"` + hist + `"`))
		cfg.Enabled = true
		archive.LogStart(log, cfg, hist)
		Expect(logs.String()).To(ContainSubstring("recorder_archives_unbounded"))
	})

	It("refuses a bad configuration or missing options and touches nothing", func() {
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		cfg.Window = 90 * time.Second
		_, err := archive.Pass(context.Background(), cfg, opts())
		Expect(err).To(MatchError(archive.ErrConfig))
		cfg = testConfig()
		o := opts()
		o.Shared = ""
		_, err = archive.Pass(context.Background(), cfg, o)
		Expect(errors.Is(err, archive.ErrOptions)).To(BeTrue())
		Expect(names(hist)).To(HaveLen(2))
	})

	It("ends after the window in progress when its context ends, skipping the rest and expiry", func() {
		buildSealed(hist, sealedName("w1", at(7, 0)), 4)
		buildSealed(hist, sealedName("w1", at(8, 0)), 4)
		cfg.Retention = 3 * time.Hour
		old := archive.WindowOf(now.Add(-5*time.Hour), time.Hour).ArchiveName("c1")
		Expect(os.WriteFile(filepath.Join(hist, old), []byte("gz"), 0o600)).To(Succeed())
		ctx, cancel := context.WithCancel(context.Background())
		o := opts()
		o.Failpoint = func(name string) {
			if name == archive.FailAfterGzip {
				cancel()
			}
		}
		rep, err := archive.Pass(ctx, cfg, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Stopped).To(BeTrue())
		Expect(rep.Published).To(HaveLen(1), "the window in progress finished")
		Expect(rep.Expired).To(BeEmpty())
		Expect(filepath.Join(hist, old)).To(BeAnExistingFile())
		Expect(filepath.Join(hist, sealedName("w1", at(8, 0)))).To(BeAnExistingFile())
	})
})
