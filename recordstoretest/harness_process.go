// The parent side of the multi-process harness: StartChild re-executes the
// test binary as a child running a Script, and Child reads its lines and
// signals it.

package recordstoretest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxEnvScript is the largest script passed in the environment itself;
// larger ones go through a file (Linux caps one environment string at
// 128 KiB).
const maxEnvScript = 64 << 10

// Child is a running child process. Its methods are safe for concurrent
// use. Next, Event and Until share one cursor over the lines received;
// StepNamed, Step and Lines look at every line.
type Child struct {
	// Script is what the child runs.
	Script Script

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr syncBuffer
	file   string // the script file, "" when passed in the environment

	mu      sync.Mutex
	lines   []Line        // guarded by mu: every line received
	cursor  int           // guarded by mu: the next line Next returns
	changed chan struct{} // guarded by mu: closed when lines grow or the child exits
	exited  bool          // guarded by mu
	state   *os.ProcessState
	waitErr error
	done    chan struct{} // closed when the process has been reaped
}

// StartChild starts the current test binary as a child running s. The
// binary must call RunChild first thing in its TestMain. A script that
// fails Script.Validate (two steps with one Name, a RefName naming no step)
// is refused with its recordstore.ErrInvalid error and starts nothing. The child runs no
// tests (-test.run='^$'); its standard output is read as Lines, its
// standard error kept for Stderr. Kill it (or let it finish) before the
// test ends: DeferCleanup(child.Kill).
func StartChild(s Script) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find test binary: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode script: %w", err)
	}
	c := &Child{Script: s, changed: make(chan struct{}), done: make(chan struct{})}
	env := string(payload)
	if len(payload) > maxEnvScript {
		f, err := os.CreateTemp("", "recordstore-child-*.json")
		if err != nil {
			return nil, fmt.Errorf("write script: %w", err)
		}
		_, werr := f.Write(payload)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(f.Name())
			return nil, fmt.Errorf("write script: %w", werr)
		}
		c.file, env = f.Name(), "@"+f.Name()
	}
	c.cmd = exec.Command(exe, "-test.run=^$")
	c.cmd.Env = append(withoutChildEnv(os.Environ()), ChildEnv+"="+env)
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("child stdout: %w", err)
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("child stdin: %w", err)
	}
	if err := c.cmd.Start(); err != nil {
		c.removeFile()
		return nil, fmt.Errorf("start child: %w", err)
	}
	go c.read(stdout)
	return c, nil
}

func withoutChildEnv(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, ChildEnv+"=") {
			out = append(out, e)
		}
	}
	return out
}

func (c *Child) removeFile() {
	if c.file != "" {
		_ = os.Remove(c.file)
	}
}

// read collects lines until the child's stdout closes, then reaps it.
func (c *Child) read(stdout io.Reader) {
	r := bufio.NewReader(stdout)
	for {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			c.add(parseLine(b))
		}
		if err != nil {
			break
		}
	}
	err := c.cmd.Wait() // closes stdin and waits for the stderr copy
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil // a non-zero status is in the state
	}
	state := c.cmd.ProcessState
	c.removeFile()
	c.mu.Lock()
	c.state, c.waitErr, c.exited = state, err, true
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(c.done)
}

// parseLine decodes one line; text that is not a Line is kept as an "raw"
// event holding the text in Error.
func parseLine(b []byte) Line {
	var l Line
	if err := json.Unmarshal(b, &l); err != nil || l.Op == "" {
		return Line{Step: -1, Op: "raw", Error: strings.TrimSpace(string(b))}
	}
	return l
}

func (c *Child) add(l Line) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, l)
	close(c.changed)
	c.changed = make(chan struct{})
}

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Next returns the next line not returned yet, waiting up to timeout. It
// fails when the child exits first (the error carries its exit status and
// the tail of its standard error) or on timeout.
func (c *Child) Next(timeout time.Duration) (Line, error) {
	return c.Until(func(Line) bool { return true }, timeout)
}

// StepNamed returns the line of the step whose Step.Name is name, waiting
// up to timeout. Every step prints exactly one line, so StepNamed finds it
// wherever it is: it neither needs nor moves the cursor of Next, Event and
// Until. It fails at once when the script names no step name.
func (c *Child) StepNamed(name string, timeout time.Duration) (Line, error) {
	i, ok := c.Script.StepIndex(name)
	if !ok {
		return Line{}, fmt.Errorf("the script has no step named %q", name)
	}
	return c.stepLine(i, timeout)
}

// Step returns the line of step i (its index in Script.Steps), waiting up
// to timeout, like StepNamed. It is kept for compatibility with scripts
// whose steps have no names; new specs name the steps they read and use
// StepNamed, which does not break when a step is inserted.
func (c *Child) Step(i int, timeout time.Duration) (Line, error) {
	if i < 0 || i >= len(c.Script.Steps) {
		return Line{}, fmt.Errorf("the script has no step %d", i)
	}
	return c.stepLine(i, timeout)
}

// stepLine waits up to timeout for the line of step i, which exists.
func (c *Child) stepLine(i int, timeout time.Duration) (Line, error) {
	op, what := c.Script.Steps[i].Op, fmt.Sprintf("step %d", i)
	if name := c.Script.Steps[i].Name; name != "" {
		what = fmt.Sprintf("step %d %q", i, name)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen := 0
	for {
		c.mu.Lock()
		for ; seen < len(c.lines); seen++ {
			if l := c.lines[seen]; l.Step == i && l.Op == op {
				c.mu.Unlock()
				return l, nil
			}
		}
		exited, changed := c.exited, c.changed
		c.mu.Unlock()
		if exited {
			return Line{}, fmt.Errorf("%s (%s): %w", what, op, c.exitError("the child exited"))
		}
		select {
		case <-changed:
		case <-deadline.C:
			return Line{}, fmt.Errorf("%s (%s): %w", what, op, c.exitError(fmt.Sprintf("no such line within %s", timeout)))
		}
	}
}

// Event returns the next line of event op (EventFailpoint, EventRole, ...),
// skipping the lines before it, waiting up to timeout.
func (c *Child) Event(op string, timeout time.Duration) (Line, error) {
	l, err := c.Until(func(l Line) bool { return l.Op == op }, timeout)
	if err != nil {
		return l, fmt.Errorf("event %s: %w", op, err)
	}
	return l, nil
}

// Until returns the next line for which match is true, skipping the lines
// before it, waiting up to timeout.
func (c *Child) Until(match func(Line) bool, timeout time.Duration) (Line, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for c.cursor < len(c.lines) {
			l := c.lines[c.cursor]
			c.cursor++
			if match(l) {
				c.mu.Unlock()
				return l, nil
			}
		}
		exited, changed := c.exited, c.changed
		c.mu.Unlock()
		if exited {
			return Line{}, c.exitError("the child exited")
		}
		select {
		case <-changed:
		case <-deadline.C:
			return Line{}, c.exitError(fmt.Sprintf("no such line within %s", timeout))
		}
	}
}

// exitError describes why a wait for a line ended, with the last line and
// the tail of stderr.
func (c *Child) exitError(what string) error {
	c.mu.Lock()
	status := "running"
	if c.exited && c.state != nil {
		status = c.state.String()
	}
	last := "none"
	if n := len(c.lines); n > 0 {
		last = c.lines[n-1].String()
	}
	c.mu.Unlock()
	return fmt.Errorf("%s (pid %d, %s; last line %s); stderr tail:\n%s", what, c.Pid(), status, last, tail(c.Stderr(), 2000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Lines returns every line received so far, consumed or not.
func (c *Child) Lines() []Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Line(nil), c.lines...)
}

// Role returns the last role the child reported (on a step line or an
// EventRole line), "" when it reported none yet. It lags the child's real
// role by the time a line takes to arrive.
func (c *Child) Role() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.lines) - 1; i >= 0; i-- {
		if r := c.lines[i].Role; r != "" {
			return r
		}
	}
	return ""
}

// Release ends the child's current OpHold step (or one ActBlock failpoint).
func (c *Child) Release() error {
	_, err := io.WriteString(c.stdin, "release\n")
	return err
}

// Kill sends SIGKILL to the child (unless it exited already) and waits for
// it to be reaped. A stopped child is killed too.
func (c *Child) Kill() error {
	if c.Exited() {
		return nil
	}
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill child %d: %w", c.Pid(), err)
	}
	_, err := c.Wait(time.Minute)
	return err
}

// Wait waits up to timeout for the child to exit and returns its status.
func (c *Child) Wait(timeout time.Duration) (*os.ProcessState, error) {
	select {
	case <-c.done:
	case <-time.After(timeout):
		return nil, fmt.Errorf("child %d still running after %s", c.Pid(), timeout)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.waitErr
}

// Exited reports whether the child has exited and been reaped.
func (c *Child) Exited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// Killed reports whether the child exited by SIGKILL (false while it runs).
func (c *Child) Killed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited || c.state == nil {
		return false
	}
	ws, ok := c.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// ExitCode returns the child's exit status: -1 while it runs or when a
// signal ended it.
func (c *Child) ExitCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited || c.state == nil {
		return -1
	}
	return c.state.ExitCode()
}

// Stderr returns what the child wrote to its standard error so far.
func (c *Child) Stderr() string { return c.stderr.String() }

func (c *Child) signal(sig os.Signal) error {
	if c.Exited() {
		return fmt.Errorf("child %d: %w", c.Pid(), os.ErrProcessDone)
	}
	return c.cmd.Process.Signal(sig)
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec and
// readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
