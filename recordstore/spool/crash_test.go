// Crash tests: a real child process (this test binary, re-executed) is
// SIGKILLed at each publish step; incoming must then hold either nothing
// or the complete batch.

package spool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/spool"
)

// The child's environment: childEnv set means "run as the child".
const (
	childEnv      = "SPOOL_TEST_CHILD"
	childRoot     = "SPOOL_TEST_ROOT"
	childFailStep = "SPOOL_TEST_FAILPOINT"
)

// runChild publishes one batch of edgeRows into the spool at $SPOOL_TEST_ROOT,
// SIGKILLing itself when the publish step $SPOOL_TEST_FAILPOINT completes.
// It prints the batch id first so the parent knows what to look for.
func runChild() int {
	step := os.Getenv(childFailStep)
	d, err := spool.OpenRoot(context.Background(), os.Getenv(childRoot), spool.Options{
		Failpoint: func(s string) {
			if s == step {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Minute) // the signal is on its way
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	del := sampleBatch(spool.NewIdentity("crash-child"), normalizeAll(allTypes(), edgeRows()))
	fmt.Println(del.ID)
	if _, err := d.Publish(context.Background(), del, spool.FormatNDJSONGz); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runCrashChild runs the child against root, to be killed at step, and
// returns the batch id it printed.
func runCrashChild(root, step string) string {
	GinkgoHelper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childRoot+"="+root, childFailStep+"="+step)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	Expect(errors.As(err, &exit)).To(BeTrue(), "the child must die, not exit (stderr: %s)", stderr.String())
	ws := exit.Sys().(syscall.WaitStatus)
	Expect(ws.Signaled() && ws.Signal() == syscall.SIGKILL).To(BeTrue(), "killed by SIGKILL, got %v (stderr: %s)", ws, stderr.String())
	id := strings.TrimSpace(string(out))
	Expect(spool.ValidID(id)).To(BeTrue(), "child printed %q", id)
	return id
}

var _ = Describe("a producer killed mid-publish", Label("crash"), func() {
	for _, step := range spool.PublishSteps {
		It("leaves nothing or the complete batch in incoming when killed after "+step, func() {
			ctx := context.Background()
			d := newDir(spool.Options{})
			id := runCrashChild(d.Root(), step)

			list, err := d.List(ctx, spool.StateIncoming)
			Expect(err).NotTo(HaveOccurred())
			strays, err := d.Strays(ctx, spool.StateIncoming)
			Expect(err).NotTo(HaveOccurred())
			Expect(strays).To(BeEmpty())
			if step != spool.StepCommitted {
				Expect(list).To(BeEmpty())
				tmp, err := os.ReadDir(d.Path(spool.StateTmp, ""))
				Expect(err).NotTo(HaveOccurred())
				Expect(tmp).To(HaveLen(1), "the half-written batch stays in tmp for GC")
				Expect(tmp[0].Name()).To(HaveSuffix(id))
				if step == spool.StepDataWritten {
					// Killed between the data file and the manifest: a
					// folder no reader could take for a batch.
					m, err := os.ReadFile(filepath.Join(d.Path(spool.StateTmp, tmp[0].Name()), spool.ManifestFile))
					if err == nil {
						Expect(m).To(BeEmpty(), "the manifest was not written yet")
					}
				}
				return
			}
			Expect(list).To(HaveLen(1))
			Expect(list[0].ID).To(Equal(id))
			b, err := d.Load(ctx, spool.StateIncoming, list[0].String())
			Expect(err).NotTo(HaveOccurred())
			del, err := b.ReadAll(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(del.Entries[0].Rows).To(Equal(normalizeAll(allTypes(), edgeRows())))
			expectEmpty(d, spool.StateTmp)
		})
	}

	It("lets GC clear what a killed producer left in tmp, and publishing go on", func() {
		ctx := context.Background()
		d := newDir(spool.Options{Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
		runCrashChild(d.Root(), spool.StepManifestWritten)
		res, err := d.GC(ctx, spool.GCOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Tmp).To(HaveLen(1))
		_, err = d.Publish(ctx, sampleBatch(spool.NewIdentity(""), nil), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		list, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(HaveLen(1))
	})
})
