//go:build unix

package owner

import (
	"os"
	"os/exec"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("pidAlive", func() {
	It("sees this process alive and an exited, unreaped child as gone", func() {
		Expect(pidAlive(os.Getpid())).To(BeTrue())
		Expect(pidAlive(0)).To(BeFalse())
		cmd := exec.Command("true")
		Expect(cmd.Start()).To(Succeed())
		pid := cmd.Process.Pid
		if runtime.GOOS == "linux" {
			// Until Wait reaps it, the exited child is a zombie.
			Eventually(func() bool { return pidAlive(pid) }).Should(BeFalse())
		}
		Expect(cmd.Wait()).To(Succeed())
		Expect(pidAlive(pid)).To(BeFalse())
	})
})
