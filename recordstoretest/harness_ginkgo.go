// Ginkgo helpers of the multi-process harness: start a child for the
// running spec (killed and checked at its end) and read step lines that
// must have succeeded.

package recordstoretest

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// MustStartChild starts a child for the running spec (see StartChild). At
// the end of the spec the child is killed if it still runs, its lines and
// standard error are written to GinkgoWriter when the spec failed, and the
// spec fails when the child's standard error reports a data race (children
// of a -race test binary run under the race detector too).
func MustStartChild(s Script) *Child {
	GinkgoHelper()
	c, err := StartChild(s)
	Expect(err).NotTo(HaveOccurred(), "start a child")
	DeferCleanup(c.cleanUp)
	return c
}

func (c *Child) cleanUp() {
	GinkgoHelper()
	killErr := c.Kill()
	if CurrentSpecReport().Failed() {
		c.report()
	}
	Expect(killErr).NotTo(HaveOccurred(), "kill child %d", c.Pid())
	Expect(c.Stderr()).NotTo(ContainSubstring("WARNING: DATA RACE"), "child %d ran into a data race", c.Pid())
}

// report writes the child's lines and standard error to GinkgoWriter.
func (c *Child) report() {
	var b strings.Builder
	fmt.Fprintf(&b, "child %d (%s):\n", c.Pid(), c.stateText())
	for _, l := range c.Lines() {
		b.WriteString("  ")
		b.WriteString(tail(l.String(), 600))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "stderr:\n%s\n", tail(c.Stderr(), 8000))
	GinkgoWriter.Print(b.String())
}

func (c *Child) stateText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited || c.state == nil {
		return "running"
	}
	return c.state.String()
}

// MustStepNamed returns the line of the step named name (see StepNamed),
// which must arrive within timeout and report success.
func (c *Child) MustStepNamed(name string, timeout time.Duration) Line {
	GinkgoHelper()
	l, err := c.StepNamed(name, timeout)
	Expect(err).NotTo(HaveOccurred())
	Expect(l.OK).To(BeTrue(), "child %d step %q failed: %s", c.Pid(), name, l)
	return l
}

// MustStep returns the line of step i, which must arrive within timeout
// and report success. It is kept for compatibility, like Step: new specs
// name their steps and use MustStepNamed.
func (c *Child) MustStep(i int, timeout time.Duration) Line {
	GinkgoHelper()
	l, err := c.Step(i, timeout)
	Expect(err).NotTo(HaveOccurred())
	Expect(l.OK).To(BeTrue(), "child %d step %d failed: %s", c.Pid(), i, l)
	return l
}

// MustEvent returns the next line of event op, which must arrive within
// timeout.
func (c *Child) MustEvent(op string, timeout time.Duration) Line {
	GinkgoHelper()
	l, err := c.Event(op, timeout)
	Expect(err).NotTo(HaveOccurred())
	return l
}

// MustFinish waits up to timeout for the child to print EventDone and exit
// with status 0.
func (c *Child) MustFinish(timeout time.Duration) {
	GinkgoHelper()
	_, err := c.Event(EventDone, timeout)
	Expect(err).NotTo(HaveOccurred())
	_, err = c.Wait(timeout)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.ExitCode()).To(Equal(0), "child %d exit status", c.Pid())
}
