// Two real processes append to the same 50 tenants of one root through the
// engine (each owns some stores and spools to the others), and are
// SIGKILLed at random: no acknowledged event is lost and none is applied
// twice.

package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// writer is one incarnation of a writer child and the ids it acknowledged.
type writer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	acked chan string
	done  chan struct{}
}

func startWriter(root, name string) *writer {
	cmd := childCmd("writer", root, name)
	in, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	w := &writer{cmd: cmd, stdin: in, acked: make(chan string, 1<<16), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.acked <- sc.Text()
		}
		close(w.acked)
	}()
	return w
}

var _ = Describe("Two processes on one root", Label("crash"), func() {
	It("lose nothing and duplicate nothing across random SIGKILLs", func() {
		root := newRoot()
		f := openFleet(root, fleet.Options{Kinds: []recordstore.Kind{noteKind, eventKind}})
		ctx := context.Background()
		for i := 0; i < crashTenants; i++ {
			Expect(f.Provision(ctx, crashTenant(i))).To(Succeed())
		}
		Expect(f.Close()).To(Succeed())

		rng := rand.New(rand.NewPCG(21, 50))
		var mu sync.Mutex
		acked := map[string]bool{}
		collect := func(w *writer, n int) { // wait for n more acks
			for i := 0; i < n; i++ {
				id, ok := <-w.acked
				if !ok {
					break
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}
		drain := func(w *writer) {
			for id := range w.acked {
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
			<-w.done
		}
		incarnation := map[string]int{"a": 0, "b": 0}
		start := func(name string) *writer {
			incarnation[name]++
			return startWriter(root, fmt.Sprintf("%s%d", name, incarnation[name]))
		}
		ws := map[string]*writer{"a": start("a"), "b": start("b")}
		for kill := 0; kill < 6; kill++ {
			name := []string{"a", "b"}[rng.IntN(2)]
			w := ws[name]
			collect(w, 20+rng.IntN(60))
			Expect(w.cmd.Process.Kill()).To(Succeed())
			drain(w)
			_ = w.cmd.Wait()
			ws[name] = start(name)
		}
		for _, w := range ws {
			collect(w, 20)
			Expect(w.stdin.Close()).To(Succeed())
			drain(w)
			Expect(w.cmd.Wait()).To(Succeed())
		}

		g := openFleet(root, fleet.Options{Kinds: []recordstore.Kind{noteKind, eventKind}})
		seen := map[string]int{}
		for i := 0; i < crashTenants; i++ {
			Expect(g.Do(ctx, crashTenant(i), func(ctx context.Context, st *fleet.Store) error {
				recs, err := st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
				for _, r := range recs {
					seen[r.Values["id"].(string)]++
				}
				return err
			})).To(Succeed())
		}
		Expect(len(acked)).To(BeNumerically(">", 100))
		for id := range acked {
			Expect(seen).To(HaveKeyWithValue(id, 1), "acknowledged event %s", id)
		}
		for id, n := range seen {
			Expect(n).To(Equal(1), "event %s applied %d times", id, n)
			Expect(strings.Count(id, "-")).To(Equal(1))
		}
	})
})
