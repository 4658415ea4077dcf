package recorder_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	_ "modernc.org/sqlite"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// testConfig is a recorder configuration in fresh folders, flushing often.
func testConfig(storage, shared string) recorder.Config {
	cfg := recorder.DefaultConfig()
	cfg.StorageDir, cfg.SharedDir = storage, shared
	cfg.WorkerName, cfg.ClusterName = "w1", "search hot"
	cfg.FlushInterval = 20 * time.Millisecond
	return cfg
}

// sealedFiles returns the sealed .db files of a history folder, sorted.
func sealedFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".db") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// openSealed opens a sealed file as the spec's readers do: immutable=1.
func openSealed(path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(db.Close)
	return db
}

func count(db *sql.DB, q string, args ...any) int64 {
	var n int64
	Expect(db.QueryRow(q, args...).Scan(&n)).To(Succeed())
	return n
}

// expectSealed checks one sealed file against the spec: its tables, its
// rollback journal, no sidecars, mode 0600, and a meta file whose counts
// are the file's.
func expectSealed(path string) dbfiles.Meta {
	fi, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), path)
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		Expect(path + side).NotTo(BeAnExistingFile())
	}
	head := make([]byte, 20)
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.Read(head)
	f.Close()
	Expect(err).NotTo(HaveOccurred())
	Expect(head[18:20]).To(Equal([]byte{1, 1}), "rollback journal in the header of %s", path)

	db := openSealed(path)
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	Expect(err).NotTo(HaveOccurred())
	var tables []string
	for rows.Next() {
		var n string
		Expect(rows.Scan(&n)).To(Succeed())
		tables = append(tables, n)
	}
	Expect(rows.Close()).To(Succeed())
	Expect(tables).To(Equal([]string{"events", "sqlite_sequence", "worker_config", "worker_state"}))

	meta, err := dbfiles.ReadMeta(filepath.Join(filepath.Dir(path), dbfiles.MetaFileName(filepath.Base(path))))
	Expect(err).NotTo(HaveOccurred())
	mfi, err := os.Stat(filepath.Join(filepath.Dir(path), dbfiles.MetaFileName(filepath.Base(path))))
	Expect(err).NotTo(HaveOccurred())
	Expect(mfi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	for _, t := range []string{"events", "worker_config", "worker_state"} {
		Expect(meta.Tables[t]).To(Equal(count(db, `SELECT count(*) FROM `+t)), "%s rows of %s", t, path)
	}
	Expect(meta.SizeBytes).To(Equal(fi.Size()))
	return meta
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var _ = Describe("the flight recorder", func() {
	var storage, shared string
	ctx := context.Background()

	BeforeEach(func() {
		storage = filepath.Join(GinkgoT().TempDir(), "storage")
		shared = filepath.Join(GinkgoT().TempDir(), "shared")
	})

	It("seals the live file into its cluster's history folder on a clean stop, with its meta file", func() {
		cfg := testConfig(storage, shared)
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Owner()).To(BeTrue())
		live := rec.LiveFile()
		Expect(filepath.Dir(live)).To(Equal(storage))
		// Recorded out of time order: the meta's first and last event
		// times are the earliest and the latest ts, not the first and last
		// rows.
		t0 := time.Date(2026, 12, 2, 10, 0, 0, 250_000_000, time.UTC)
		for i, s := range []int{3, 1, 4, 0, 2} {
			e := recorder.NewEvent(recorder.KindAnnotation, t0.Add(time.Duration(s)*time.Second))
			e.TaskID = recorder.Ptr("t-" + strconv.Itoa(i))
			rec.Record(e)
		}
		Expect(rec.Flush(ctx)).To(Succeed())
		Expect(rec.Close(ctx)).To(Succeed())

		hist := filepath.Join(shared, "history", "search_hot")
		fi, err := os.Stat(hist)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		files := sealedFiles(hist)
		Expect(files).To(Equal([]string{filepath.Join(hist, filepath.Base(live))}))
		meta := expectSealed(files[0])
		Expect(meta.Worker).To(Equal("w1"))
		Expect(meta.Cluster).To(Equal("search hot"))
		Expect(meta.Instance).To(Equal(rec.Instance()))
		Expect(meta.Tables).To(HaveKeyWithValue("events", int64(5)))
		Expect(meta.Tables).To(HaveKeyWithValue("worker_config", int64(1)))
		Expect(meta.EventTypes).To(Equal(map[string]int64{recorder.KindAnnotation: 5}))
		Expect(meta.FirstEventTS).To(HaveValue(BeTemporally("==", t0)))
		Expect(meta.LastEventTS).To(HaveValue(BeTemporally("==", t0.Add(4*time.Second))))

		Expect(live).NotTo(BeAnExistingFile())
		Expect(filepath.Join(storage, dbfiles.WatchdogFileName("w1"))).NotTo(BeAnExistingFile())
	})

	It("flushes and seals on a stop with no time left, leaving the move to the next start", func() {
		cfg := testConfig(storage, shared)
		cfg.FlushInterval = time.Hour
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		for _, e := range taskEvents("late", 4) {
			rec.Record(e)
		}
		live := rec.LiveFile()
		done, cancel := context.WithCancel(ctx)
		cancel()
		Expect(rec.Close(done)).To(Succeed())
		Expect(live).To(BeAnExistingFile()) // not moved: no time left
		Expect(sealedFiles(filepath.Join(shared, "history", "search_hot"))).To(BeEmpty())

		rec, err = recorder.Open(ctx, cfg, recorder.Options{LeftoverDelay: time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		sealed := filepath.Join(shared, "history", "search_hot", filepath.Base(live))
		Eventually(func() []string { return sealedFiles(filepath.Dir(sealed)) }, "30s", "50ms").Should(ContainElement(sealed))
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(expectSealed(sealed).Tables["events"]).To(Equal(int64(4)))
	})

	It("creates no file at all in memory-only mode", func() {
		cfg := testConfig("", "")
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		rec.Record(taskEvents("t", 1)[0])
		w, err := rec.Write(ctx, taskEvents("t", 3))
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Appended).To(BeZero())
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(storage).NotTo(BeADirectory())
	})

	DescribeTable("keeps every table whatever the store_* flags, writing only the rows they allow",
		func(set map[string]string, wantEvents, wantConfig, wantState bool) {
			cfg := testConfig(storage, shared)
			for k, v := range set {
				Expect(cfg.Set(k, v)).To(Succeed())
			}
			rec, err := recorder.Open(ctx, cfg, recorder.Options{})
			Expect(err).NotTo(HaveOccurred())
			for _, e := range taskEvents("m", 3) {
				rec.Record(e)
			}
			Expect(rec.SyncState(ctx)).To(Succeed())
			Expect(rec.Close(ctx)).To(Succeed())
			files := sealedFiles(filepath.Join(shared, "history", "search_hot"))
			Expect(files).To(HaveLen(1))
			m := expectSealed(files[0]) // all three tables, whatever the flags
			Expect(m.Worker).To(Equal("w1"))
			Expect(m.Cluster).To(Equal("search hot"))
			Expect(m.Tables["events"] == 3).To(Equal(wantEvents), "events")
			Expect(m.Tables["worker_config"] == 1).To(Equal(wantConfig), "worker_config")
			Expect(m.Tables["worker_state"] > 0).To(Equal(wantState), "worker_state")
		},
		Entry("all on", nil, true, true, true),
		Entry("store_events off", map[string]string{"ui.recorder.store_events": "false"}, false, true, true),
		Entry("store_config off: the meta file still names worker and cluster", map[string]string{"ui.recorder.store_config": "false"}, true, false, true),
		Entry("store_state off", map[string]string{"ui.recorder.store_state": "false"}, true, true, false),
		Entry("store_config on, store_events off", map[string]string{"ui.recorder.store_events": "false", "ui.recorder.store_state": "false"}, false, true, false),
	)

	It("writes a worker_state snapshot every state sync interval", func() {
		cfg := testConfig(storage, shared)
		cfg.StateSyncInterval = 20 * time.Millisecond
		rec, err := recorder.Open(ctx, cfg, recorder.Options{State: func() recorder.State {
			return recorder.State{PoolMax: 8}
		}})
		Expect(err).NotTo(HaveOccurred())
		live := rec.LiveFile()
		states := func() int64 { // a reader beside the owner, closed at once
			db, err := sql.Open("sqlite", "file:"+live+"?mode=ro")
			Expect(err).NotTo(HaveOccurred())
			defer db.Close()
			return count(db, `SELECT count(*) FROM worker_state WHERE pool_max = 8 AND updated_at > 0`)
		}
		Eventually(states, "30s", "20ms").Should(BeNumerically(">=", 3))
		Expect(rec.Close(ctx)).To(Succeed())
	})

	It("creates no file with the UI off, even with a storage.dir", func() {
		cfg := testConfig(storage, shared)
		Expect(cfg.Set("ui.enabled", "false")).To(Succeed())
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		rec.Record(taskEvents("t", 1)[0])
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(storage).NotTo(BeADirectory())
		Expect(shared).NotTo(BeADirectory())
	})

	It("writes the buffer on a panic in a goroutine that deferred LastBreath", func() {
		cfg := testConfig(storage, shared)
		cfg.FlushInterval = time.Hour // only the last breath writes
		c := startChild("panic", cfg, 4)
		var line string
		Eventually(c.lines, "30s").Should(Receive(&line))
		Expect(line).To(HavePrefix("live "))
		live := strings.TrimPrefix(line, "live ")
		Expect(c.cmd.Wait()).To(HaveOccurred()) // it died of the panic
		rec, err := recorder.Open(ctx, cfg, recorder.Options{LeftoverDelay: time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		sealed := filepath.Join(shared, "history", "search_hot", filepath.Base(live))
		Eventually(func() []string { return sealedFiles(filepath.Dir(sealed)) }, "30s", "50ms").Should(ContainElement(sealed))
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(expectSealed(sealed).Tables["events"]).To(Equal(int64(4)))
	})

	It("refuses a bad configuration naming the key, creating nothing", func() {
		cfg := testConfig(storage, shared)
		cfg.MaxBuffer = 10
		_, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).To(MatchError(ContainSubstring("ui.recorder.max_buffer")))
		Expect(storage).NotTo(BeADirectory())
	})

	It("rotates: every event lands once across the sealed files, each with its worker_config", func() {
		cfg := testConfig(storage, shared)
		cfg.RotationInterval = 300 * time.Millisecond
		rec, err := recorder.Open(ctx, cfg, recorder.Options{Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		const n = 60
		for i := 0; i < n; i++ {
			rec.Record(taskEvents("r"+strings.Repeat("x", i%3), 1)[0])
			time.Sleep(20 * time.Millisecond)
		}
		Expect(rec.Close(ctx)).To(Succeed())
		files := sealedFiles(filepath.Join(shared, "history", "search_hot"))
		Expect(len(files)).To(BeNumerically(">=", 2))
		var total int64
		for _, f := range files {
			m := expectSealed(f)
			total += m.Tables["events"]
			Expect(count(openSealed(f), `SELECT count(*) FROM worker_config WHERE id = 1 AND worker_name = 'w1'`)).To(Equal(int64(1)))
		}
		Expect(total).To(Equal(int64(n)))
	})

	It("runs AfterRotate on the background job after each rotation tick, once the sealed files are moved, one call at a time", func() {
		cfg := testConfig(storage, shared)
		cfg.RotationInterval = 100 * time.Millisecond
		hist := filepath.Join(shared, "history", "search_hot")
		var running, overlaps, calls atomic.Int32
		seen := make(chan int, 100)
		rec, err := recorder.Open(ctx, cfg, recorder.Options{Logger: testLogger(), AfterRotate: func(context.Context) {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			calls.Add(1)
			select {
			case seen <- len(sealedFiles(hist)):
			default:
			}
			time.Sleep(150 * time.Millisecond) // longer than a tick: ticks meanwhile merge
		}})
		Expect(err).NotTo(HaveOccurred())
		rec.Record(taskEvents("a", 1)[0])
		var first int
		Eventually(seen, "30s").Should(Receive(&first))
		Expect(first).To(BeNumerically(">=", 1), "the file sealed by the tick is in the history folder already")
		Eventually(calls.Load, "30s").Should(BeNumerically(">=", 3))
		Expect(rec.Close(ctx)).To(Succeed())
		after := calls.Load()
		Expect(overlaps.Load()).To(BeZero())
		Consistently(calls.Load, "300ms").Should(Equal(after), "no call after Close")
	})

	It("seals a process killed mid-write as a leftover at the next start, with every event it acknowledged", func() {
		cfg := testConfig(storage, shared)
		c := startChild("write-until-killed", cfg, 5)
		var line string
		Eventually(c.lines, "30s").Should(Receive(&line))
		Expect(line).To(HavePrefix("live "))
		killed := strings.TrimPrefix(line, "live ")
		acked := -1
		for acked < 10 {
			Eventually(c.lines, "30s").Should(Receive(&line))
			_, err := fmt.Sscanf(line, "acked %d", &acked)
			Expect(err).NotTo(HaveOccurred(), line)
		}
		Expect(c.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		_ = c.cmd.Wait()
		for l := range c.lines { // acknowledged before the kill landed
			_, err := fmt.Sscanf(l, "acked %d", &acked)
			Expect(err).NotTo(HaveOccurred(), l)
		}
		Expect(killed).To(BeAnExistingFile())

		reg := prometheus.NewRegistry()
		rec, err := recorder.Open(ctx, cfg, recorder.Options{LeftoverDelay: time.Millisecond, Registerer: reg})
		Expect(err).NotTo(HaveOccurred())
		Expect(gauge(reg, "drakkar_recorder_previous_run_killed_total")).To(Equal(1.0))
		hist := filepath.Join(shared, "history", "search_hot")
		sealed := filepath.Join(hist, filepath.Base(killed))
		Eventually(func() []string { return sealedFiles(hist) }, "30s", "50ms").Should(ContainElement(sealed))
		Expect(rec.Close(ctx)).To(Succeed())
		expectSealed(sealed)
		db := openSealed(sealed)
		for b := 0; b <= acked; b++ {
			Expect(count(db, `SELECT count(*) FROM events WHERE task_id LIKE ?`, fmt.Sprintf("k-%d-%%", b))).To(Equal(int64(5)), "batch %d", b)
		}
		// At most the batch in flight when the kill landed, whole or not at all.
		Expect(count(db, `SELECT count(*) FROM events`)).To(BeElementOf(int64(5*(acked+1)), int64(5*(acked+2))))
		Expect(sealedFiles(hist)).To(HaveLen(2))
	})

	DescribeTable("sets aside a leftover without recorder tables as <name>.unreadable, and the backlog empties",
		func(body []byte) {
			Expect(os.MkdirAll(storage, 0o700)).To(Succeed())
			bad := filepath.Join(storage, "w1-2020-01-01__00_00_00.db")
			Expect(os.WriteFile(bad, body, 0o644)).To(Succeed())
			old := time.Now().Add(-time.Hour)
			Expect(os.Chtimes(bad, old, old)).To(Succeed())
			logs := gbytes.NewBuffer()
			reg := prometheus.NewRegistry()
			cfg := testConfig(storage, shared)
			rec, err := recorder.Open(ctx, cfg, recorder.Options{LeftoverDelay: time.Millisecond, Registerer: reg,
				Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			Expect(err).NotTo(HaveOccurred())
			Eventually(bad+recorder.UnreadableSuffix, "30s", "20ms").Should(BeAnExistingFile())
			Expect(bad).NotTo(BeAnExistingFile())
			Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "30s", "20ms").Should(BeZero())
			Eventually(logs, "30s").Should(gbytes.Say(`"msg":"recorder_file_quarantined"`))
			Expect(rec.Close(ctx)).To(Succeed())
			Expect(string(logs.Contents())).NotTo(ContainSubstring("no such table"))
			Expect(sealedFiles(filepath.Join(shared, "history", "search_hot"))).To(HaveLen(1), "only the live file was sealed")
		},
		Entry("an empty file", []byte{}),
		Entry("a file that is no database", []byte("this is not a SQLite database, just text at a recorder name\n")),
	)

	It("refuses a second process of the worker configured for another cluster or shared folder, naming both values", func() {
		cfg := testConfig(storage, shared)
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		// runSpoolWriter runs a child writing one batch with c and returns
		// its exit code and output.
		runSpoolWriter := func(c recorder.Config) (int, string) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "RECORDER_TEST_CHILD=spool-writer", "RECORDER_TEST_CONFIG="+mustJSON(c), "RECORDER_TEST_COUNT=1")
			out, _ := cmd.CombinedOutput()
			return cmd.ProcessState.ExitCode(), string(out)
		}
		other := cfg
		other.ClusterName = "search cold"
		code, out := runSpoolWriter(other)
		Expect(code).To(Equal(4), out)
		Expect(out).To(ContainSubstring(`invalid: recorder config: cluster.name "search cold" differs from "search hot", the cluster of the running worker "w1"`))
		other = cfg
		other.SharedDir = filepath.Join(GinkgoT().TempDir(), "elsewhere")
		code, out = runSpoolWriter(other)
		Expect(code).To(Equal(4), out)
		Expect(out).To(ContainSubstring(`shared.dir "` + other.SharedDir + `" differs from "` + shared + `"`))
		Expect(other.SharedDir).NotTo(BeADirectory(), "nothing made in the other shared folder")

		code, out = runSpoolWriter(cfg)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("acked 0 true"))
		Expect(rec.Close(ctx)).To(Succeed())
		hist := filepath.Join(shared, "history", "search_hot")
		files := sealedFiles(hist)
		Expect(files).To(HaveLen(1))
		Expect(count(openSealed(files[0]), `SELECT count(*) FROM events`)).To(Equal(int64(10)), "only the matching writer's batch")
	})

	It("takes events of a second process with the same worker name through the spool while it rotates: each once", func() {
		cfg := testConfig(storage, shared)
		cfg.RotationInterval = 200 * time.Millisecond
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		c := startChild("spool-writer", cfg, 40)
		acked := 0
		for l := range c.lines {
			Expect(l).To(HaveSuffix(" true"), "the child wrote through the spool")
			acked++
		}
		Expect(c.cmd.Wait()).To(Succeed())
		// The other process left the owner's watchdog alone.
		dog := filepath.Join(storage, dbfiles.WatchdogFileName("w1"))
		run, ok, err := recorder.ReadRunInfo(storage, "w1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(run).To(Equal(recorder.RunInfo{Cluster: "search hot", SharedDir: shared}))
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(dog).NotTo(BeAnExistingFile())
		ids := map[string]int{}
		files := sealedFiles(filepath.Join(shared, "history", "search_hot"))
		Expect(len(files)).To(BeNumerically(">=", 2))
		for _, f := range files {
			expectSealed(f)
			rows, err := openSealed(f).Query(`SELECT task_id FROM events`)
			Expect(err).NotTo(HaveOccurred())
			for rows.Next() {
				var id string
				Expect(rows.Scan(&id)).To(Succeed())
				ids[id]++
			}
			Expect(rows.Close()).To(Succeed())
		}
		Expect(ids).To(HaveLen(acked * 10))
		for id, n := range ids {
			Expect(n).To(Equal(1), id)
		}
	})

	It("moves across file systems by copy, fsync and rename", func() {
		st, err := os.Stat("/dev/shm")
		if err != nil {
			Skip("no /dev/shm here: " + err.Error())
		}
		tmp, err := os.Stat(os.TempDir())
		Expect(err).NotTo(HaveOccurred())
		if st.Sys().(*syscall.Stat_t).Dev == tmp.Sys().(*syscall.Stat_t).Dev {
			Skip("/dev/shm is on the same file system as " + os.TempDir())
		}
		shm, err := os.MkdirTemp("/dev/shm", "recorder-test-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, shm)
		cfg := testConfig(filepath.Join(shm, "storage"), shared)
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		Expect(err).NotTo(HaveOccurred())
		_, err = rec.Write(ctx, taskEvents("x", 3))
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Close(ctx)).To(Succeed())
		files := sealedFiles(filepath.Join(shared, "history", "search_hot"))
		Expect(files).To(HaveLen(1))
		Expect(expectSealed(files[0]).Tables["events"]).To(Equal(int64(3)))
		ents, err := os.ReadDir(filepath.Join(shared, "history", "search_hot"))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			Expect(e.Name()).NotTo(HaveSuffix(".incoming"))
		}
	})

	It("counts each file it cannot move once, however often it is retried, and says why it stays", func() {
		cfg := testConfig(storage, shared)
		cfg.RotationInterval = 100 * time.Millisecond
		hist := filepath.Join(shared, "history", "search_hot")
		fs := &refusingFS{FS: fsutil.OS{}, under: hist}
		fs.refuse.Store(true)
		reg := prometheus.NewRegistry()
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		rec, err := recorder.Open(ctx, cfg, recorder.Options{Registerer: reg, Mover: &recorder.Mover{FS: fs}, Logger: log})
		Expect(err).NotTo(HaveOccurred())
		_, err = rec.Write(ctx, taskEvents("x", 2))
		Expect(err).NotTo(HaveOccurred())
		// Several ticks, each trying every file of the backlog again.
		Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "30s", "20ms").Should(BeNumerically(">=", 4))
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		Expect(rec.Close(cctx)).To(Succeed())
		backlog := rec.Backlog()
		Expect(len(backlog)).To(BeNumerically(">=", 5), "the live file joined it on Close")
		Expect(gauge(reg, "drakkar_recorder_seal_failures_total")).To(Equal(float64(len(backlog))))
		var retried bool
		for _, f := range backlog {
			Expect(f.Reason).To(Equal("publish"), f.Path)
			Expect(f.Sealed).To(BeTrue())
			Expect(f.Error).To(ContainSubstring("permission denied"))
			Expect(f.FailedAt).NotTo(BeNil())
			retried = retried || f.Failures > 1
		}
		Expect(retried).To(BeTrue(), "the oldest files were tried more than once")
		var warned, debug int
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"recorder_seal_failed"`) {
				if strings.Contains(line, `"level":"WARN"`) {
					warned++
				} else {
					debug++
				}
			}
		}
		Expect(warned).To(Equal(len(backlog)), "one warning per file while its failure stays the same")
		Expect(debug).To(BeNumerically(">", 0))
	})

	It("keeps files it cannot move in its backlog, counted, and moves them once the history folder takes writes again", func() {
		cfg := testConfig(storage, shared)
		cfg.RotationInterval = 200 * time.Millisecond
		hist := filepath.Join(shared, "history", "search_hot")
		fs := &refusingFS{FS: fsutil.OS{}, under: hist}
		fs.refuse.Store(true)
		reg := prometheus.NewRegistry()
		rec, err := recorder.Open(ctx, cfg, recorder.Options{Registerer: reg, Mover: &recorder.Mover{FS: fs}})
		Expect(err).NotTo(HaveOccurred())
		_, err = rec.Write(ctx, taskEvents("x", 2))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "30s", "20ms").Should(BeNumerically(">=", 2))
		Expect(gauge(reg, "drakkar_recorder_seal_failures_total")).To(BeNumerically(">=", 1))
		Expect(sealedFiles(hist)).To(BeEmpty())
		closed := rec.OwnClosedFiles()
		Expect(len(closed)).To(BeNumerically(">=", 2))
		for _, p := range closed {
			Expect(filepath.Dir(p)).To(Equal(storage))
			Expect(p).NotTo(Equal(rec.LiveFile()))
		}

		fs.refuse.Store(false)
		Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "30s", "20ms").Should(BeZero())
		Eventually(rec.OwnClosedFiles, "30s", "20ms").Should(BeEmpty())
		Expect(rec.Close(ctx)).To(Succeed())
		var total int64
		for _, f := range sealedFiles(hist) {
			total += expectSealed(f).Tables["events"]
		}
		Expect(total).To(Equal(int64(2)))
		ents, err := os.ReadDir(storage)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			Expect(e.Name()).NotTo(HaveSuffix(".db"))
		}
	})
})

// refusingFS fails every creation and rename under a folder with EACCES
// while refuse is set, as a history folder on a mount that refuses
// writes does.
type refusingFS struct {
	fsutil.FS
	under  string
	refuse atomic.Bool
}

func (f *refusingFS) hit(paths ...string) error {
	if !f.refuse.Load() {
		return nil
	}
	for _, p := range paths {
		if strings.HasPrefix(p, f.under) {
			return &os.PathError{Op: "write", Path: p, Err: syscall.EACCES}
		}
	}
	return nil
}

func (f *refusingFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		if err := f.hit(name); err != nil {
			return nil, err
		}
	}
	return f.FS.OpenFile(name, flag, perm)
}

func (f *refusingFS) Rename(oldpath, newpath string) error {
	if err := f.hit(newpath); err != nil {
		return err
	}
	return f.FS.Rename(oldpath, newpath)
}

func (f *refusingFS) Mkdir(name string, perm os.FileMode) error {
	if err := f.hit(name); err != nil {
		return err
	}
	return f.FS.Mkdir(name, perm)
}

// gauge reads the value of an unlabelled metric from reg (0 when absent).
func gauge(reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.Metric) == 0 {
			continue
		}
		m := mf.Metric[0]
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		}
	}
	return 0
}
