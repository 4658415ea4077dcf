// Signals on unix: a child kills or stops itself with real signals, and the
// parent stops and continues it.

//go:build unix

package recordstoretest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// killSelf SIGKILLs this process: nothing after it runs.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously; never return
}

// stopSelf SIGSTOPs this process; it returns after a SIGCONT.
func stopSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	// SIGSTOP is delivered asynchronously: give it a moment so that the
	// caller does not run on before the process is stopped.
	time.Sleep(10 * time.Millisecond)
}

// Stop sends SIGSTOP to the child and returns once it is stopped (see
// StopProcess).
func (c *Child) Stop() error {
	if c.Exited() {
		return c.signal(syscall.SIGSTOP) // the error that says so
	}
	return StopProcess(c.Pid())
}

// StopProcess sends SIGSTOP to process pid and, where /proc lists its
// threads (Linux), returns only once every one of them is stopped, within
// 10 s. A stop signal is taken by one thread first; until every thread has
// taken it the others run on — on a busy machine for milliseconds, long
// enough for a process owning a store to take and answer one more request
// after kill(2) returned. A spec that needs the process still must wait.
func StopProcess(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop %d: %w", pid, err)
	}
	task := fmt.Sprintf("/proc/%d/task", pid)
	if _, err := os.Stat(task); err != nil {
		return nil // no /proc: stopped soon after the signal
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, err := runningThreads(task)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stop %d: %d threads still running after 10s", pid, running)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts the threads under task (/proc/<pid>/task) whose
// state is not stopped (T, or t when traced).
func runningThreads(task string) (int, error) {
	des, err := os.ReadDir(task)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(task, de.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command name, which is in parentheses
		// and may hold spaces or parentheses itself.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return 0, fmt.Errorf("%s/%s/stat: no state", task, de.Name())
		}
		if st := b[i+2]; st != 'T' && st != 't' {
			n++
		}
	}
	return n, nil
}

// Cont sends SIGCONT to a stopped child.
func (c *Child) Cont() error { return c.signal(syscall.SIGCONT) }
