// query scan --follow: live rows, and the three ways it ends cleanly.

package main_test

import (
	"os/exec"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// startFollow starts query scan --follow with extra args.
func startFollow(s *store, args ...string) *gexec.Session {
	cmd := exec.Command(queryBin, append([]string{"--store", s.path, "scan", "--follow"}, args...)...)
	cmd.Env = withoutStoreEnv()
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
	return session
}

var _ = Describe("query scan --follow", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
		s.ok(`{"msg":"a"}`+"\n"+`{"msg":"b"}`, "append", "--stream", "e1", "--kind", "events")
	})

	It("prints a sealed stream's rows and exits 0", func() {
		s.ok("", "seal", "--stream", "e1")
		f := startFollow(s, "--stream", "e1")
		Eventually(f).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(f.Out.Contents())).To(Equal(`{"_seq":1,"msg":"a"}` + "\n" + `{"_seq":2,"msg":"b"}` + "\n"))
	})

	It("prints the rows there are, then rows appended by another process, until the stream is sealed", func() {
		f := startFollow(s, "--stream", "e1", "--after", "1")
		Eventually(f.Out).WithTimeout(20 * time.Second).Should(gbytes.Say(`\{"_seq":2,"msg":"b"\}\n`))
		s.ok(`{"msg":"c"}`, "append", "--stream", "e1", "--kind", "events")
		Eventually(f.Out).WithTimeout(20 * time.Second).Should(gbytes.Say(`\{"_seq":3,"msg":"c"\}\n`))
		Consistently(f).WithTimeout(300 * time.Millisecond).ShouldNot(gexec.Exit())
		s.ok("", "seal", "--stream", "e1")
		Eventually(f).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
	})

	It("waits for a stream that does not exist yet", func() {
		f := startFollow(s, "--stream", "later")
		Consistently(f).WithTimeout(300 * time.Millisecond).ShouldNot(gexec.Exit())
		s.ok(`{"msg":"first"}`, "append", "--stream", "later", "--kind", "events")
		Eventually(f.Out).WithTimeout(20 * time.Second).Should(gbytes.Say(`\{"_seq":1,"msg":"first"\}\n`))
	})

	It("stops after --limit rows", func() {
		f := startFollow(s, "--stream", "e1", "--limit", "1")
		Eventually(f).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(f.Out.Contents())).To(Equal(`{"_seq":1,"msg":"a"}` + "\n"))
	})

	DescribeTable("exits 0 on a signal",
		func(sig syscall.Signal) {
			f := startFollow(s, "--stream", "e1")
			Eventually(f.Out).WithTimeout(20 * time.Second).Should(gbytes.Say(`"_seq":2`))
			f.Signal(sig)
			Eventually(f).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
			Expect(f.Err.Contents()).To(BeEmpty())
		},
		Entry("SIGINT", syscall.SIGINT),
		Entry("SIGTERM", syscall.SIGTERM),
	)
})
