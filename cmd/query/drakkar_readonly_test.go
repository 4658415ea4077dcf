// A worker whose shared.dir is a read-only mount: it starts, records
// locally, keeps its closed files in the backlog, and seals them into the
// history folder once the mount takes writes again. Needs root (mount).

package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// mountCmd runs mount(8) and returns its combined output and error.
func mountCmd(args ...string) (string, error) {
	out, err := exec.Command("mount", args...).CombinedOutput()
	return string(out), err
}

var _ = Describe("query drakkar worker on a read-only shared.dir", func() {
	It("starts, keeps its files in the backlog while the folder refuses writes, and seals them once it takes writes", func() {
		dir := GinkgoT().TempDir()
		src, shared := filepath.Join(dir, "src"), filepath.Join(dir, "shared")
		Expect(os.MkdirAll(src, 0o700)).To(Succeed())
		Expect(os.MkdirAll(shared, 0o700)).To(Succeed())
		if out, err := mountCmd("--bind", src, shared); err != nil {
			Skip("no bind mount here (" + strings.TrimSpace(out) + "): the read-only shared.dir spec needs root")
		}
		DeferCleanup(func() { _, _ = exec.Command("umount", shared).CombinedOutput() })
		out, err := mountCmd("-o", "remount,ro,bind", shared)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(os.WriteFile(filepath.Join(shared, "probe"), nil, 0o600)).NotTo(Succeed(), "the mount is read-only")

		config := filepath.Join(dir, "worker.yaml")
		Expect(os.WriteFile(config, []byte(workerYAML(shared, false)), 0o600)).To(Succeed())
		w := startWorker(dir, shared, "w1", "c1", config)
		Expect(string(w.session.Err.Contents())).To(ContainSubstring("registry_unavailable"))
		w.record(`{"event":"task_started","task_id":"ro-1"}` + "\n")

		type status struct {
			Recorder struct {
				Backlog []struct {
					Path, Reason, Error string
					Sealed              bool
				}
			}
		}
		get := func() status {
			r := runQuery(dir, nil, "", "drakkar", "status", "--url", w.url, "--token", fleetToken)
			Expect(r.code).To(Equal(0), r.stderr)
			var st status
			Expect(json.Unmarshal([]byte(r.stdout), &st)).To(Succeed())
			return st
		}
		// Rotation every 3.6 s: the file holding ro-1 is closed, sealed,
		// and cannot be moved.
		Eventually(func() int { return len(get().Recorder.Backlog) }).
			WithTimeout(60 * time.Second).WithPolling(300 * time.Millisecond).Should(BeNumerically(">=", 1))
		for _, f := range get().Recorder.Backlog {
			Expect(f.Reason).To(Equal("publish"), f.Path)
			Expect(f.Error).To(ContainSubstring("read-only file system"))
			Expect(f.Sealed).To(BeTrue())
			Expect(filepath.Dir(f.Path)).To(Equal(w.storage))
		}

		out, err = mountCmd("-o", "remount,rw,bind", shared)
		Expect(err).NotTo(HaveOccurred(), out)
		hist := filepath.Join(shared, "history", "c1")
		Eventually(func() int { return len(get().Recorder.Backlog) }).
			WithTimeout(60 * time.Second).WithPolling(300 * time.Millisecond).Should(BeZero())
		var found bool
		ents, err := os.ReadDir(hist)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".db") && strings.Contains(sqlite3CLI(filepath.Join(hist, e.Name()),
				"SELECT count(*) FROM events WHERE task_id = 'ro-1'"), "1") {
				found = true
			}
		}
		Expect(found).To(BeTrue(), "the event recorded while read-only is in a sealed file of the history folder")
	})
})
