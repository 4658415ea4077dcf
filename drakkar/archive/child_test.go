// The archiver child process: the test binary re-executed with childEnv
// set runs passes on a shared folder and prints every event and report as
// one JSON line, so that specs can kill, pause and race real processes.

package archive_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
)

// The child's environment.
const (
	childEnv       = "ARCHIVE_TEST_CHILD"     // "pass" (one pass) or "loop" (passes until SIGTERM)
	childShared    = "ARCHIVE_TEST_SHARED"    // shared.dir
	childSet       = "ARCHIVE_TEST_SET"       // key=value,key=value
	childFailpoint = "ARCHIVE_TEST_FAILPOINT" // <failpoint>:kill, or <failpoint>:wait (until a line on stdin)
	childWorker    = "ARCHIVE_TEST_WORKER"
)

// childLine is one line of a child's output.
type childLine struct {
	Event  *archive.Event  `json:"event,omitempty"`
	Report *archive.Report `json:"report,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Failpoint is printed when the child stops itself at a failpoint.
	Failpoint string `json:"failpoint,omitempty"`
}

// runChild is the body of a child process.
func runChild(mode string) int {
	cfg := archive.DefaultConfig()
	for kv := range strings.SplitSeq(os.Getenv(childSet), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if err := cfg.Set(k, v); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
		}
	}
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	out := func(l childLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l)
	}
	opts := archive.Options{
		Shared: os.Getenv(childShared), Cluster: "c1", Worker: os.Getenv(childWorker),
		RefreshEvery: 50 * time.Millisecond,
		OnEvent:      func(e archive.Event) { out(childLine{Event: &e}) },
	}
	if fp, action, ok := strings.Cut(os.Getenv(childFailpoint), ":"); ok {
		opts.Failpoint = func(name string) {
			if name != fp {
				return
			}
			if action == "kill" {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			// Wait here (the parent pauses this process with SIGSTOP
			// meanwhile) until the parent writes a line.
			out(childLine{Failpoint: name})
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	for {
		rep, err := archive.Pass(ctx, cfg, opts)
		if err != nil {
			out(childLine{Error: err.Error()})
		}
		out(childLine{Report: &rep})
		if mode != "loop" || ctx.Err() != nil {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// child is a running archiver child.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan childLine
	done  chan struct{}
	mu    sync.Mutex
	all   []childLine
}

// startChild starts an archiver child on shared with the given mode,
// settings (key=value) and failpoint ("" for none).
func startChild(mode, shared, worker, failpoint string, set ...string) *child {
	exe, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childShared+"="+shared, childWorker+"="+worker,
		childSet+"="+strings.Join(set, ","), childFailpoint+"="+failpoint)
	// Its own process group, whose parent (this process) is outside it:
	// a group that is not orphaned, so that no exit elsewhere sends the
	// paused child a SIGCONT.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	stdout, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan childLine, 100000), done: make(chan struct{})}
	go c.read(stdout)
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-c.done
	})
	return c
}

// read collects the child's lines until its stdout closes, then waits
// for it.
func (c *child) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l childLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		c.mu.Lock()
		c.all = append(c.all, l)
		c.mu.Unlock()
		c.lines <- l
	}
	_ = c.cmd.Wait()
}

// state is the child's process state letter from /proc (T: stopped).
func (c *child) state() string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return rest[:1]
}

// pause stops the child with SIGSTOP and waits until it is stopped.
func (c *child) pause() {
	Expect(c.cmd.Process.Signal(syscall.SIGSTOP)).To(Succeed())
	Eventually(c.state).WithTimeout(10 * time.Second).WithPolling(time.Millisecond).Should(Equal("T"))
}

// resume lets a child waiting at a failpoint go on.
func (c *child) resume() {
	_, err := c.stdin.Write([]byte("go\n"))
	Expect(err).NotTo(HaveOccurred())
}

// wait waits for the child to exit and returns every line it printed.
func (c *child) wait() []childLine {
	Eventually(c.done).WithTimeout(60 * time.Second).Should(BeClosed())
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]childLine(nil), c.all...)
}

// next waits for the child's next line matching ok.
func (c *child) next(ok func(childLine) bool) childLine {
	var got childLine
	Eventually(func() bool {
		select {
		case l := <-c.lines:
			got = l
			return ok(l)
		default:
			return false
		}
	}).WithTimeout(60 * time.Second).WithPolling(time.Millisecond).Should(BeTrue())
	return got
}

// report is the last report of lines.
func report(lines []childLine) archive.Report {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Report != nil {
			return *lines[i].Report
		}
	}
	Fail("the child printed no report")
	return archive.Report{}
}
