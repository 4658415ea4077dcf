// The soak: producer children append keyed rows to one stream while
// whichever process owns the store is SIGKILLed at random and replaced.
// Every acknowledged append must be stored exactly once, in its window.
// Producer 0 writes through the role-aware bulk Writer instead (a batch
// per write, a flush after every second write), so that its direct
// application as owner, its spooling otherwise and its wait for what it
// spooled before a promotion are soaked too.
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

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	rt "github.com/fb46ecde/records/recordstoretest"
)

const (
	soakProducers = 3
	soakPer       = 5 // rows per append
	soakFlushes   = 2 // a Writer producer's writes per flush
)

// soakRun is one producer process: its key prefix, the steps of its
// appends (paced by short sleeps) and its child. A Writer producer's
// appends are writes, acknowledged by its flushes.
type soakRun struct {
	prefix  string
	appends []string // step name of append j (of write j for a Writer)
	flushes []soakFlush
	c       *rt.Child
}

// soakFlush is a Writer producer's flush step (its name) and the writes
// it answers.
type soakFlush struct {
	step   string
	writes []int
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
			var unflushed []int
			for j := range appends {
				steps = append(steps, rt.Step{Op: rt.OpSleep, Duration: time.Duration(rng.IntN(10)) * time.Millisecond})
				if i != 0 {
					name := fmt.Sprintf("append-%d", j)
					r.appends = append(r.appends, name)
					steps = append(steps, appendGen("s", r.prefix, j*soakPer, soakPer).Named(name))
					continue
				}
				name := fmt.Sprintf("write-%d", j)
				r.appends = append(r.appends, name)
				steps = append(steps, writeGen("s", r.prefix, j*soakPer, soakPer).Named(name))
				if unflushed = append(unflushed, j); len(unflushed) == soakFlushes || j == appends-1 {
					flush := fmt.Sprintf("flush-%d", len(r.flushes))
					r.flushes = append(r.flushes, soakFlush{step: flush, writes: unflushed})
					steps = append(steps, rt.Step{Op: rt.OpFlush, Name: flush, Timeout: wait})
					unflushed = nil
				}
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
	acked, pending, byWriter := 0, 0, 0
	checkAcked := func(r *soakRun, j int, res recordstore.AppendResult) {
		Expect(res.Appended).To(BeEquivalentTo(soakPer))
		for i, k := range genKeys(r.prefix, j*soakPer, soakPer) {
			Expect(counts[k]).To(Equal(1), "acknowledged key %s", k)
			Expect(bySeq[res.From+int64(i)]).To(Equal(k), "window of %s append %d", r.prefix, j)
		}
		acked += soakPer
	}
	// checkCut checks the appends (writes) from..to-1 of a killed run,
	// which may have been delivered unacknowledged: each whole or not at
	// all.
	checkCut := func(r *soakRun, from, to int) {
		for j := from; j < to; j++ {
			present := 0
			for _, k := range genKeys(r.prefix, j*soakPer, soakPer) {
				Expect(counts[k]).To(BeNumerically("<=", 1), "key %s", k)
				present += counts[k]
			}
			Expect(present).To(BeElementOf(0, soakPer), "the append cut short was stored in part")
			pending += soakPer
		}
	}
	for _, r := range runs {
		if l, ok := stepLine(r.c, "open"); ok {
			Expect(l.OK).To(BeTrue(), "run %s could not open the store: %s", r.prefix, l)
		}
		if r.flushes != nil {
			done := 0
			for _, f := range r.flushes {
				l, ok := stepLine(r.c, f.step)
				if !ok {
					break
				}
				Expect(l.OK).To(BeTrue(), "writer %s: %s", r.prefix, l)
				var results []recordstore.BatchResult
				Expect(l.Decode(&results)).To(Succeed())
				Expect(results).To(HaveLen(len(f.writes)), "writer %s: a batch per write", r.prefix)
				for n, j := range f.writes {
					Expect(results[n].Outcome).To(Equal(recordstore.OutcomeCommitted))
					Expect(results[n].Entries).To(HaveLen(1))
					checkAcked(r, j, *results[n].Entries[0].Append)
					byWriter += soakPer
				}
				done = f.writes[len(f.writes)-1] + 1
			}
			if r.c.Killed() && done < len(r.appends) {
				// The writes of the flush in flight may have been delivered.
				checkCut(r, done, min(done+soakFlushes, len(r.appends)))
			}
			continue
		}
		done := 0
		for j, step := range r.appends {
			l, ok := stepLine(r.c, step)
			if !ok {
				break
			}
			Expect(l.OK).To(BeTrue(), "producer %s: %s", r.prefix, l)
			done++
			checkAcked(r, j, appendResult(l))
		}
		if r.c.Killed() && done < len(r.appends) {
			// The append after the last acknowledged one may have been in
			// flight when the process was killed.
			checkCut(r, done, done+1)
		}
	}
	Expect(len(recs)).To(BeNumerically(">=", acked))
	Expect(len(recs)).To(BeNumerically("<=", acked+pending))
	for k, n := range counts {
		Expect(n).To(Equal(1), "key %s", k)
	}
	AddReportEntry("soak rows", fmt.Sprintf("%d stored: %d acknowledged (%d of them through the Writer), %d pending",
		len(recs), acked, byWriter, pending))
	Expect(byWriter).To(BeNumerically(">", 0), "the Writer producer acknowledged nothing: it was not soaked")
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

// stepLine returns the line a child printed for the step named name, if it
// did.
func stepLine(c *rt.Child, name string) (rt.Line, bool) {
	GinkgoHelper()
	i, ok := c.Script.StepIndex(name)
	Expect(ok).To(BeTrue(), "the script names no step %q", name)
	for _, l := range c.Lines() {
		if l.Step == i && l.Op == c.Script.Steps[i].Op {
			return l, true
		}
	}
	return rt.Line{}, false
}
