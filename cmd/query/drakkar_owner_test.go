// query drakkar record run by several processes at once for one worker
// name: the runs that do not own the recorder get the exact outcome of
// their events, whatever happens to the owner (it exits, seals and moves
// its file; it is SIGKILLed), and no event is recorded twice.
//
// The SIGKILL spec is labelled soak: make test runs it for
// RECORDSTORE_SOAK (default 15s of feeding), make soak for longer.

package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstoretest"
)

// recordRun is one run of query drakkar record: its events' task ids and
// how it ended.
type recordRun struct {
	tasks  []string
	code   int
	killed bool
	stderr string
}

// recordEvents is n NDJSON events whose task ids are prefix-0, prefix-1, …
func recordEvents(prefix string, n int) (string, []string) {
	var b strings.Builder
	tasks := make([]string, n)
	for i := range tasks {
		tasks[i] = fmt.Sprintf("%s-%d", prefix, i)
		fmt.Fprintf(&b, `{"event":"annotation","task_id":%q}`+"\n", tasks[i])
	}
	return b.String(), tasks
}

// startRecord starts query drakkar record for worker d with stdin; the
// process is killed once ctx ends.
func startRecord(ctx context.Context, dir, storage, shared, stdin string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	args := append([]string{"drakkar", "record", "--storage", storage, "--shared", shared, "--name", "d"}, extra...)
	cmd := exec.CommandContext(ctx, queryBin, args...)
	cmd.Dir = dir
	cmd.Env = withoutStoreEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	ExpectWithOffset(1, cmd.Start()).To(Succeed())
	return cmd, &errb
}

// finish waits for cmd and records how it ended in run.
func finish(cmd *exec.Cmd, errb *bytes.Buffer, run *recordRun) {
	err := cmd.Wait()
	run.stderr = errb.String()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			run.killed = ws.Signal() == syscall.SIGKILL
		}
	default:
		run.code = -1
	}
}

// taskCounts counts the events of every task id in worker d's files: the
// history folder's and storage.dir's (a file in both, met halfway through
// a move, counts once).
func taskCounts(storage, shared string) map[string]int {
	files := map[string]string{}
	for _, dir := range []string{storage, filepath.Join(shared, "history", "default")} {
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			Expect(err).NotTo(HaveOccurred())
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "d-") && strings.HasSuffix(e.Name(), ".db") {
				files[e.Name()] = filepath.Join(dir, e.Name())
			}
		}
	}
	counts := map[string]int{}
	for _, f := range files {
		db, err := sql.Open("sqlite", "file:"+f+"?mode=ro")
		Expect(err).NotTo(HaveOccurred())
		rows, err := db.Query(`SELECT task_id FROM events WHERE task_id IS NOT NULL`)
		if err != nil && strings.Contains(err.Error(), "no such table") {
			_ = db.Close()
			continue // a live file its owner was killed in before the tables
		}
		Expect(err).NotTo(HaveOccurred(), f)
		for rows.Next() {
			var t string
			Expect(rows.Scan(&t)).To(Succeed())
			counts[t]++
		}
		Expect(rows.Err()).NotTo(HaveOccurred())
		_ = rows.Close()
		_ = db.Close()
	}
	return counts
}

// ownerPID is the pid the worker's state file names (0: none).
func ownerPID(storage string) int {
	b, err := os.ReadFile(filepath.Join(storage, "d.records.owner.json"))
	if err != nil {
		return 0
	}
	var st struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &st) != nil {
		return 0
	}
	return st.PID
}

var _ = Describe("query drakkar record by several processes for one worker name", func() {
	var dir, storage, shared string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		storage, shared = filepath.Join(dir, "storage"), filepath.Join(dir, "shared")
	})

	It("answers every run exactly when the owner applies another run's events, seals and moves its file, and exits", func() {
		for round := 0; round < 3; round++ {
			st, sh := filepath.Join(storage, strconv.Itoa(round)), filepath.Join(shared, strconv.Itoa(round))
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			runs := make([]recordRun, 3)
			var wg sync.WaitGroup
			for i := range runs {
				in, tasks := recordEvents(fmt.Sprintf("r%d.%d", round, i), 500)
				runs[i].tasks = tasks
				cmd, errb := startRecord(ctx, dir, st, sh, in)
				wg.Add(1)
				go func() {
					defer wg.Done()
					finish(cmd, errb, &runs[i])
				}()
			}
			wg.Wait()
			cancel()
			counts := taskCounts(st, sh)
			for i, run := range runs {
				Expect(run.code).To(Equal(0), "round %d, run %d: %s", round, i, run.stderr)
				for _, t := range run.tasks {
					Expect(counts[t]).To(Equal(1), "round %d, run %d: event %s", round, i, t)
				}
			}
			Expect(counts).To(HaveLen(1500))
		}
	})

	It("says once which process it waits for, and with --timeout fails pending while that process does not answer; the events go in once later", func() {
		config := writeFile(dir, "worker.yaml", workerYAML(shared, false))
		w := startWorker(dir, shared, "d", "", config)
		storage = w.storage
		pid := w.session.Command.Process.Pid
		waiting := fmt.Sprintf("query: waiting for pid %d on ", pid)

		in, first := recordEvents("first", 10)
		r := runQuery(dir, nil, in, "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "d")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(strings.Count(r.stderr, "query: waiting for pid")).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix(waiting))

		Expect(recordstoretest.StopProcess(pid)).To(Succeed())
		stopped := true
		defer func() {
			if stopped {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}()
		in, second := recordEvents("second", 10)
		r = runQuery(dir, nil, in, "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "d", "--timeout", "2s")
		Expect(r.code).To(Equal(1), r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		Expect(lines).To(HaveLen(2), r.stderr)
		Expect(lines[0]).To(HavePrefix(waiting))
		Expect(lines[1]).To(MatchRegexp(`^query: pending: batch [0-9a-f]{32} is spooled and not applied yet$`))

		Expect(syscall.Kill(pid, syscall.SIGCONT)).To(Succeed())
		stopped = false
		w.session.Terminate()
		Eventually(w.session).WithTimeout(60 * time.Second).Should(gexec.Exit(0))
		counts := taskCounts(storage, shared)
		for _, t := range append(first, second...) {
			Expect(counts[t]).To(Equal(1), "event %s", t)
		}
	})

	It("keeps every run's answer true to the files, and every event once, while owners are SIGKILLed at random", Label("soak"), func() {
		length := 15 * time.Second
		if v := os.Getenv("RECORDSTORE_SOAK"); v != "" {
			d, err := time.ParseDuration(v)
			Expect(err).NotTo(HaveOccurred())
			length = d
		}
		const feeders, perRun = 4, 50
		rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 27))
		var (
			mu      sync.Mutex
			runs    []*recordRun
			running = map[int]bool{}
		)
		deadline := time.Now().Add(length)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		for f := 0; f < feeders; f++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for n := 0; time.Now().Before(deadline); n++ {
					in, tasks := recordEvents(fmt.Sprintf("f%d.%d", f, n), perRun)
					run := &recordRun{tasks: tasks}
					// A hung run is killed by ctx at the end and fails the spec.
					cmd, errb := startRecord(ctx, dir, storage, shared, in, "--timeout", "45s")
					mu.Lock()
					runs = append(runs, run)
					running[cmd.Process.Pid] = true
					mu.Unlock()
					finish(cmd, errb, run)
					mu.Lock()
					delete(running, cmd.Process.Pid)
					mu.Unlock()
				}
			}()
		}
		kills := 0
		for time.Now().Before(deadline) {
			time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
			pid := ownerPID(storage)
			mu.Lock()
			// Only a process of this spec, and only while it runs (its
			// Wait has not returned: the pid is not reused).
			if pid != 0 && running[pid] {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					kills++
				}
			}
			mu.Unlock()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		Eventually(done).WithTimeout(2 * time.Minute).Should(BeClosed())

		// One last run owns the recorder alone: it applies what killed
		// runs left in the spool.
		last, lastTasks := recordEvents("last", 1)
		r := runQuery(dir, nil, last, "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "d")
		Expect(r.code).To(Equal(0), r.stderr)

		counts := taskCounts(storage, shared)
		Expect(counts[lastTasks[0]]).To(Equal(1))
		answered, killed := 0, 0
		for i, run := range runs {
			if run.killed {
				killed++
				for _, t := range run.tasks {
					Expect(counts[t]).To(BeNumerically("<=", 1), "killed run %d: event %s", i, t)
				}
				continue
			}
			// Every run not killed is answered, and the answer is true.
			Expect(run.code).To(Equal(0), "run %d: %s", i, run.stderr)
			answered++
			for _, t := range run.tasks {
				Expect(counts[t]).To(Equal(1), "run %d: event %s", i, t)
			}
		}
		for t, n := range counts {
			Expect(n).To(Equal(1), "event %s", t)
		}
		GinkgoWriter.Printf("runs %d: answered %d, killed %d (owners SIGKILLed %d times)\n", len(runs), answered, killed, kills)
		Expect(kills).To(BeNumerically(">", 0))
	})
})
