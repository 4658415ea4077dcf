// Signals on unix: a child kills or stops itself with real signals, and the
// parent stops and continues it.

//go:build unix

package recordstoretest

import (
	"os"
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

// Stop sends SIGSTOP to the child: it stops at once, wherever it is.
func (c *Child) Stop() error { return c.signal(syscall.SIGSTOP) }

// Cont sends SIGCONT to a stopped child.
func (c *Child) Cont() error { return c.signal(syscall.SIGCONT) }
