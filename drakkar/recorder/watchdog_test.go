// Specs of the watchdog file: first run, clean previous run, killed
// previous run (a file left behind, and a real child killed with SIGKILL).

package recorder_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// watchdogChildEnv names the storage folder of the child process that
// TestWatchdogChild becomes.
const watchdogChildEnv = "RECORDER_WATCHDOG_CHILD_DIR"

// TestWatchdogChild is the child process of the SIGKILL spec: it opens
// the watchdog of worker "w", says "ready" and waits to be killed. It does
// nothing in a normal test run.
func TestWatchdogChild(t *testing.T) {
	dir := os.Getenv(watchdogChildEnv)
	if dir == "" {
		t.Skip("only as the child of the watchdog SIGKILL spec")
	}
	if _, _, err := recorder.OpenWatchdog(dir, "w"); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

var _ = Describe("The watchdog file", func() {
	var dir, path string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		path = filepath.Join(dir, "w.watchdog")
	})

	It("reports a first run as not killed and writes an empty file with mode 0600", func() {
		w, killed, err := recorder.OpenWatchdog(dir, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(killed).To(BeFalse())
		Expect(w.Path()).To(Equal(path))
		Expect(os.ReadFile(path)).To(BeEmpty())
		Expect(mode(path)).To(Equal(os.FileMode(0o600)))
	})

	It("removes the file on a clean stop, and the next start reports no kill", func() {
		w, _, err := recorder.OpenWatchdog(dir, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(w.CleanExit()).To(Succeed())
		Expect(path).NotTo(BeAnExistingFile())
		_, killed, err := recorder.OpenWatchdog(dir, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(killed).To(BeFalse())
	})

	DescribeTable("reads a file left by the previous run",
		func(content string, wantKilled bool) {
			Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
			_, killed, err := recorder.OpenWatchdog(dir, "w")
			Expect(err).NotTo(HaveOccurred())
			Expect(killed).To(Equal(wantKilled))
			Expect(os.ReadFile(path)).To(BeEmpty())
		},
		Entry("empty: the run was killed", "", true),
		Entry("with the marker: a clean stop that crashed before the unlink", "CLEAN_EXIT", false),
		Entry("other text: killed", "something else", true),
	)

	It("does not mix up workers", func() {
		Expect(os.WriteFile(filepath.Join(dir, "w-b.watchdog"), nil, 0o600)).To(Succeed())
		_, killed, err := recorder.OpenWatchdog(dir, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(killed).To(BeFalse())
	})

	It("reports a real process killed with SIGKILL as killed", func() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogChild$")
		cmd.Env = append(os.Environ(), watchdogChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(cmd.Start()).To(Succeed())
		DeferCleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line, err := bufio.NewReader(out).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("ready\n"))
		Expect(cmd.Process.Kill()).To(Succeed()) // SIGKILL
		Expect(cmd.Wait()).To(HaveOccurred())
		_, killed, err := recorder.OpenWatchdog(dir, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(killed).To(BeTrue())
	})
})
