// The soak: producer children append keyed rows to one stream while
// whichever process owns the store is SIGKILLed at random and replaced.
// Every acknowledged append must be stored exactly once, in its window.
//
// Knobs (environment): RECORDSTORE_SOAK is the run's length (default 20s),
// RECORDSTORE_SOAK_APPENDS the appends per producer before it closes and a
// fresh one takes its place (default 100). A longer run:
//
//	RECORDSTORE_SOAK=10m go test ./recordstore/owner/ -timeout 0 -args -ginkgo.label-filter=soak

package owner_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/owner"
	rt "github.com/fb46ecde/records/recordstoretest"
)

const (
	soakProducers = 3
	soakPer       = 5 // rows per append
)

// soakRun is one producer process: its key prefix, the steps of its
// appends (paced by short sleeps) and its child.
type soakRun struct {
	prefix  string
	appends []int // step index of append j
	c       *rt.Child
}

var _ = Describe("soak", Label("soak"), func() {
	It("keeps every acknowledged append exactly once, in its window, while owners are killed at random", func() {
		length := envDuration("RECORDSTORE_SOAK", 20*time.Second)
		appends := envInt("RECORDSTORE_SOAK_APPENDS", 100)
		rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 7))
		path := storePath()
		first := startOwner(path, fast(), nil)

		var runs []*soakRun
		current := make([]*soakRun, soakProducers)
		incarnation := 0
		start := func(i int) {
			incarnation++
			r := &soakRun{prefix: fmt.Sprintf("p%d.%d", i, incarnation)}
			var steps []rt.Step
			for j := range appends {
				steps = append(steps, rt.Step{Op: rt.OpSleep, Duration: time.Duration(rng.IntN(10)) * time.Millisecond})
				r.appends = append(r.appends, len(steps)+1) // +1: the open step comes first
				steps = append(steps, appendGen("s", r.prefix, j*soakPer, soakPer))
			}
			r.c = startProducer(path, fast(), nil, append(steps, closeStore())...)
			current[i] = r
			runs = append(runs, r)
		}
		for i := range current {
			start(i)
		}

		kills, nextKill := 0, time.Now()
		for end := time.Now().Add(length); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			for i, r := range current {
				if r.c.Exited() {
					start(i)
				}
			}
			if time.Now().Before(nextKill) {
				continue
			}
			if victim := soakOwner(first, current); victim >= -1 {
				if victim == -1 {
					Expect(first.Kill()).To(Succeed())
					first = nil
				} else {
					Expect(current[victim].c.Kill()).To(Succeed())
					start(victim)
				}
				kills++
				nextKill = time.Now().Add(time.Duration(100+rng.IntN(400)) * time.Millisecond)
			}
		}
		for _, r := range current {
			r.c.MustFinish(wait)
		}
		if first != nil {
			Expect(first.Kill()).To(Succeed())
		}
		checkSoak(path, runs)
		AddReportEntry("soak", fmt.Sprintf("%s, %d producer runs, %d owners killed", length, len(runs), kills))
		Expect(kills).To(BeNumerically(">", 0), "no owner was ever killed: the soak proved nothing")
	})
})

// soakOwner returns which process reports owning the store: -1 for the
// first owner, i for producer i, -2 for none.
func soakOwner(first *rt.Child, current []*soakRun) int {
	if first != nil && first.Role() == string(owner.RoleOwner) {
		return -1
	}
	for i, r := range current {
		if r.c.Role() == string(owner.RoleOwner) && !r.c.Exited() {
			return i
		}
	}
	return -2
}

// checkSoak compares the store with what the producers were told: every
// acknowledged append is stored once at exactly its window; an append cut
// short by a kill is stored whole or not at all; nothing else is stored.
func checkSoak(path string, runs []*soakRun) {
	GinkgoHelper()
	recs := finalRows(path, "s")
	bySeq := make(map[int64]string, len(recs))
	for _, r := range recs {
		bySeq[r.Seq] = r.Values["k"].(string)
	}
	counts := keyCounts(recs)
	acked, pending := 0, 0
	for _, r := range runs {
		done := 0
		for j, step := range r.appends {
			l, ok := stepLine(r.c, step)
			if !ok {
				break
			}
			Expect(l.OK).To(BeTrue(), "producer %s: %s", r.prefix, l)
			done++
			res := appendResult(l)
			Expect(res.Appended).To(BeEquivalentTo(soakPer))
			for i, k := range genKeys(r.prefix, j*soakPer, soakPer) {
				Expect(counts[k]).To(Equal(1), "acknowledged key %s", k)
				Expect(bySeq[res.From+int64(i)]).To(Equal(k), "window of %s append %d", r.prefix, j)
			}
			acked += soakPer
		}
		if r.c.Killed() && done < len(r.appends) {
			// The append after the last acknowledged one may have been in
			// flight when the process was killed.
			present := 0
			for _, k := range genKeys(r.prefix, done*soakPer, soakPer) {
				Expect(counts[k]).To(BeNumerically("<=", 1), "key %s", k)
				present += counts[k]
			}
			Expect(present).To(BeElementOf(0, soakPer), "the append cut short was stored in part")
			pending += soakPer
		}
	}
	Expect(len(recs)).To(BeNumerically(">=", acked))
	Expect(len(recs)).To(BeNumerically("<=", acked+pending))
	for k, n := range counts {
		Expect(n).To(Equal(1), "key %s", k)
	}
	AddReportEntry("soak rows", fmt.Sprintf("%d stored: %d acknowledged, %d pending", len(recs), acked, pending))
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		Expect(err).NotTo(HaveOccurred(), "%s", name)
		return d
	}
	return def
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		Expect(err).NotTo(HaveOccurred(), "%s", name)
		return n
	}
	return def
}

// stepLine returns the line a child printed for step i, if it did.
func stepLine(c *rt.Child, i int) (rt.Line, bool) {
	for _, l := range c.Lines() {
		if l.Step == i && l.Op == c.Script.Steps[i].Op {
			return l, true
		}
	}
	return rt.Line{}, false
}
