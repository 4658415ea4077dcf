// The README's "Beyond one machine" tour, run as written: its commands
// are read from README.md and run by bash against the real binary and an
// S3-compatible server on 127.0.0.1, so that the tour keeps working.

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

var _ = Describe("the README's replication tour", func() {
	It("runs as written: replicate, restore elsewhere, verify, export", func() {
		readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
		Expect(err).NotTo(HaveOccurred())
		_, section, ok := strings.Cut(string(readme), "## Beyond one machine")
		Expect(ok).To(BeTrue(), "README has the section")
		_, block, ok := strings.Cut(section, "```sh\n")
		Expect(ok).To(BeTrue())
		block, _, _ = strings.Cut(block, "```")
		srv, err := s3test.Start("demo")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)
		addr := strings.TrimPrefix(srv.Endpoint, "http://")
		var script []string
		for _, line := range strings.Split(block, "\n") {
			if line == "" || strings.HasPrefix(line, "go run ") {
				continue // the server is the test's own
			}
			script = append(script, strings.ReplaceAll(line, "127.0.0.1:9000", addr))
		}
		Expect(script).To(HaveLen(7), "exports, the address and five commands")
		bin := filepath.Dir(queryBin)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
		cmd.Dir = GinkgoT().TempDir()
		cmd.Env = append(withoutStoreEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring(`"highSeq":1000,"total":1000,"rows":1000`), "the restore found every row")
		Expect(string(out)).To(ContainSubstring(`"diffs":[],"moving":false`), "verify found no difference")
		keys, err := srv.Keys("lake/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(ContainElement("lake/stream=ev/_manifest.json"))
	})
})
