// Real worker processes converging: three children of the test binary,
// each with its own storage dir and one shared dir, write conflicting
// entries and pull each other over loopback HTTP.

package cache_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
)

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	url   string
	lines chan string
}

// startChild runs the test binary as a child with spec s and waits for
// its "ready" line (worker mode).
func startChild(s childSpec) *child {
	b, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.Stderr = GinkgoWriter
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	ch := &child{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case ch.lines <- sc.Text():
			default:
			}
		}
		close(ch.lines)
	}()
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if s.Mode == "worker" {
		ch.url = strings.TrimPrefix(ch.await("ready "), "ready ")
	}
	return ch
}

// await returns the first line of the child starting with prefix.
func (c *child) await(prefix string) string {
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			Expect(ok).To(BeTrue(), "the child ended before printing %q", prefix)
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			Fail("no line " + prefix + " from the child")
		}
	}
}

// stop ends the child with SIGTERM (a clean stop) and waits for it.
func (c *child) stop() {
	Expect(c.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	Expect(c.cmd.Wait()).To(Succeed())
}

// childDump is a child's /dump answer.
type childDump struct {
	Done bool          `json:"done"`
	Rows []cache.Entry `json:"rows"`
}

func (c *child) dump() (childDump, error) {
	var d childDump
	resp, err := http.Get(c.url + "/dump")
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	return d, json.NewDecoder(resp.Body).Decode(&d)
}

// scoped keeps the rows of scope, sorted by key (List's order).
func scoped(rows []cache.Entry, scope cache.Scope) []cache.Entry {
	out := []cache.Entry{}
	for _, r := range rows {
		if r.Scope == scope {
			out = append(out, r)
		}
	}
	return out
}

// fleet starts three workers (w1, w2 in cluster blue; w3 in cluster3).
func fleet(cluster3 string, writes int) (specs []childSpec, kids []*child) {
	root := GinkgoT().TempDir()
	shared := filepath.Join(root, "shared")
	for i, cl := range []string{"blue", "blue", cluster3} {
		s := childSpec{Mode: "worker", Storage: filepath.Join(root, fmt.Sprint("s", i+1)), Shared: shared,
			Worker: fmt.Sprint("w", i+1), Cluster: cl, Seed: uint64(GinkgoRandomSeed()) + uint64(i), Writes: writes}
		specs = append(specs, s)
		kids = append(kids, startChild(s))
	}
	return specs, kids
}

// converged waits until every child is done writing and the children's
// rows agree: cluster rows among the same cluster, global rows among all,
// no expiring row left, and no local row from another worker.
func converged(specs []childSpec, kids []*child) {
	Eventually(func(g Gomega) {
		dumps := make([]childDump, len(kids))
		for i, k := range kids {
			d, err := k.dump()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Done).To(BeTrue())
			for _, r := range scoped(d.Rows, cache.ScopeLocal) {
				Expect(r.OriginWorkerID).To(Equal(specs[i].Worker), "a local row crossed")
			}
			for _, r := range d.Rows {
				g.Expect(r.Key).NotTo(HavePrefix("e-"), "an expired row is still stored")
			}
			dumps[i] = d
		}
		for i := range kids {
			for j := range kids {
				g.Expect(scoped(dumps[i].Rows, cache.ScopeGlobal)).To(Equal(scoped(dumps[j].Rows, cache.ScopeGlobal)))
				if specs[i].Cluster == specs[j].Cluster {
					g.Expect(scoped(dumps[i].Rows, cache.ScopeCluster)).To(Equal(scoped(dumps[j].Rows, cache.ScopeCluster)))
				} else {
					for _, r := range scoped(dumps[i].Rows, cache.ScopeCluster) {
						Expect(r.OriginWorkerID).NotTo(Equal(specs[j].Worker), "a cluster row crossed clusters")
					}
				}
			}
		}
		g.Expect(scoped(dumps[0].Rows, cache.ScopeGlobal)).NotTo(BeEmpty())
	}).WithTimeout(20 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
}

var _ = Describe("Worker processes sharing one folder", Label("integration"), func() {
	It("converge on the same cluster and global rows, and keep local rows home", func() {
		specs, kids := fleet("blue", 60)
		converged(specs, kids)
		for _, k := range kids {
			k.stop()
		}
	})

	It("converge when a worker is SIGKILLed mid-way and restarted", func() {
		specs, kids := fleet("blue", 60)
		kids[1].await("wrote 20")
		Expect(kids[1].cmd.Process.Kill()).To(Succeed())
		_ = kids[1].cmd.Wait()
		s := specs[1]
		s.Seed += 100
		kids[1] = startChild(s)
		converged(specs, kids)
	})

	It("send only global rows to a worker of another cluster", func() {
		specs, kids := fleet("red", 60)
		converged(specs, kids)
		d, err := kids[2].dump()
		Expect(err).NotTo(HaveOccurred())
		for _, r := range scoped(d.Rows, cache.ScopeCluster) {
			Expect(r.OriginWorkerID).To(Equal("w3"))
		}
	})

	It("take a second process's write through the owner's spool and LWW rule", func() {
		specs, kids := fleet("blue", 0)
		set := specs[0]
		set.Mode, set.Key, set.Value = "set", "g-spooled", `{"from": "cli"}`
		kid := startChild(set)
		Expect(kid.await("owner ")).To(Equal("owner false"))
		Expect(kid.cmd.Wait()).To(Succeed())
		Eventually(func(g Gomega) {
			d, err := kids[0].dump()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Rows).To(ContainElement(HaveField("Key", "g-spooled")))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		converged(specs, kids)
	})
})

var _ = context.Background
