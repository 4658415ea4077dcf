package replica_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// The child's environment: the store, the replica, the first batch number
// and the step between two of its batch numbers (children never share a
// number), and whether its appends wait for the replica.
const (
	envChild      = "RECORDS_REPLICA_CHILD"
	envChildURL   = "RECORDS_REPLICA_CHILD_URL"
	envChildFirst = "RECORDS_REPLICA_CHILD_FIRST"
	envChildStep  = "RECORDS_REPLICA_CHILD_STEP"
	envChildWait  = "RECORDS_REPLICA_CHILD_WAIT"
)

// rowsPerBatch is how many rows each batch of a child holds.
const rowsPerBatch = 4

// TestReplicaChild is the child process of the crash spec: it opens the
// store with a replica and appends batch after batch, printing "ack N" once
// the append of batch N returned without error, until its stdin closes;
// then it closes the store and prints "closed".
func TestReplicaChild(t *testing.T) {
	path := os.Getenv(envChild)
	if path == "" {
		t.Skip("the crash spec's child process")
	}
	first, _ := strconv.ParseInt(os.Getenv(envChildFirst), 10, 64)
	step, _ := strconv.ParseInt(os.Getenv(envChildStep), 10, 64)
	wait := os.Getenv(envChildWait) == "1"
	ctx := context.Background()
	st, err := openReplicated(ctx, path, os.Getenv(envChildURL), 30*time.Second)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := st.DeclareKinds(ctx, []recordstore.Kind{counterKind}, owner.WriteOptions{}); err != nil {
		t.Fatalf("declare: %v", err)
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	for n := first; ; n += step {
		select {
		case <-stop:
			if os.Getenv("RECORDS_REPLICA_DEBUG") != "" {
				if sts, err := st.Status(ctx); err == nil && sts.Replica != nil {
					fmt.Fprintf(os.Stderr, "pid %d before close: role %s replica %+v\n", os.Getpid(), sts.Role, *sts.Replica)
				}
			}
			if err := st.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			fmt.Println("closed")
			return
		default:
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err := st.Append(actx, "s", "counter", rowsOf(n, rowsPerBatch),
			owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: wait}})
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "append %d: %v\n", n, err)
			continue
		}
		fmt.Printf("ack %d\n", n)
	}
}

// child is one running child process of the crash spec.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	done   chan struct{}
	closed bool
}

// acks collects the batches the children acknowledged.
type acks struct {
	mu      sync.Mutex
	n       map[int64]bool // acknowledged batches
	waited  map[int64]bool // of those, acknowledged after the replica held them
	perProc map[int]int
}

func (a *acks) count(pid int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.perProc[pid]
}

// startChild starts a child appending batches first, first+step, ...
func startChild(t *testing.T, srv *s3test.Server, path, url string, first, step int64, wait bool, a *acks) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaChild$", "-test.count=1", "-test.v=false")
	w := "0"
	if wait {
		w = "1"
	}
	cmd.Env = append(os.Environ(), srv.Env()...)
	cmd.Env = append(cmd.Env, envChild+"="+path, envChildURL+"="+url,
		envChildFirst+"="+strconv.FormatInt(first, 10), envChildStep+"="+strconv.FormatInt(step, 10), envChildWait+"="+w)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	pid := cmd.Process.Pid
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if s, ok := strings.CutPrefix(line, "ack "); ok {
				n, _ := strconv.ParseInt(s, 10, 64)
				a.mu.Lock()
				a.n[n] = true
				if wait {
					a.waited[n] = true
				}
				a.perProc[pid]++
				a.mu.Unlock()
			}
			if line == "closed" {
				c.closed = true
			}
		}
		_ = cmd.Wait()
	}()
	return c
}

// kill SIGKILLs the child and waits for it to be gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		t.Fatal("a killed child did not exit")
	}
}

// close closes the child's stdin and waits for its clean exit.
func (c *child) close(t *testing.T) {
	t.Helper()
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a child did not close")
	}
	if !c.closed {
		t.Fatal("a child exited without closing the store")
	}
}

// waitAcks waits until the child with pid acknowledged at least n batches.
func waitAcks(t *testing.T, a *acks, c *child, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for a.count(c.cmd.Process.Pid) < n {
		select {
		case <-c.done:
			t.Fatalf("child %d exited after %d acks", c.cmd.Process.Pid, a.count(c.cmd.Process.Pid))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d: %d acks, want %d", c.cmd.Process.Pid, a.count(c.cmd.Process.Pid), n)
		}
	}
}

// checkRestored restores the replica and checks that every batch of want
// is in it whole, and that no batch is in it partly.
func checkRestored(ctx context.Context, t *testing.T, url string, want map[int64]bool, what string) {
	t.Helper()
	got := restoreCounts(ctx, t, url)
	missing := 0
	for n := range want {
		if got[n] != rowsPerBatch {
			missing++
			t.Errorf("%s: batch %d has %d rows in the restored file, want %d", what, n, got[n], rowsPerBatch)
		}
	}
	for n, c := range got {
		if c != rowsPerBatch {
			t.Errorf("%s: batch %d is in the restored file with %d rows", what, n, c)
		}
	}
	t.Logf("%s: %d acknowledged batches, %d in the restored file, %d missing", what, len(want), len(got), missing)
}

// TestReplicaHoldsEveryCommitThroughOwnerChangesAndKills appends from
// child processes through owner changes — clean closes, promotions, and
// SIGKILLs of owners in the middle of their appends and shipping — to a
// replica on the S3 test server, and restores it: every acknowledged batch
// is there. Halfway and at the end every process is killed at once: the
// batches acknowledged with WriteOptions.Replicated are in the replica
// before any later owner ships anything.
func TestReplicaHoldsEveryCommitThroughOwnerChangesAndKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	srv := startS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "store")
	url := srv.URL("crash")
	a := &acks{n: map[int64]bool{}, waited: map[int64]bool{}, perProc: map[int]int{}}
	const step = 1000 // child k appends k, k+1000, k+2000, ...
	k := int64(0)
	next := func(wait bool) *child {
		k++
		return startChild(t, srv, path, url, k, step, wait, a)
	}

	// Round 1: an owner and a non-owner; the owner is killed, the other
	// is promoted and carries on; a third joins; the promoted one closes
	// cleanly.
	c1 := next(false)
	waitAcks(t, a, c1, 5)
	c2 := next(true)
	waitAcks(t, a, c2, 3)
	c1.kill(t)
	waitAcks(t, a, c2, a.count(c2.cmd.Process.Pid)+5)
	c3 := next(false)
	waitAcks(t, a, c3, 3)
	c2.close(t)
	waitAcks(t, a, c3, a.count(c3.cmd.Process.Pid)+5)

	// Round 2: everything killed at once; the waited batches must be in
	// the replica already.
	c4 := next(true)
	waitAcks(t, a, c4, 5)
	c3.kill(t)
	c4.kill(t)
	a.mu.Lock()
	waited := map[int64]bool{}
	for n := range a.waited {
		waited[n] = true
	}
	a.mu.Unlock()
	checkRestored(ctx, t, url, waited, "after killing every process")

	// Round 3: a new owner ships what the killed ones left, keeps
	// appending, and closes cleanly: every acknowledged batch is there.
	c5 := next(false)
	waitAcks(t, a, c5, 5)
	c5.close(t)
	a.mu.Lock()
	all := map[int64]bool{}
	for n := range a.n {
		all[n] = true
	}
	a.mu.Unlock()
	checkRestored(ctx, t, url, all, "after a clean close")
	if t.Failed() || os.Getenv("RECORDS_REPLICA_DEBUG") != "" {
		keys, _ := srv.Keys("crash")
		for _, k := range keys {
			t.Logf("replica object %s", k)
		}
	}
}
