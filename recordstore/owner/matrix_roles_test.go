// The crash matrix, roles: owners dying, stopping and starting while other
// processes write; who ends up owning the store, and that nothing is lost.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

var _ = Describe("roles across processes", Label("crash"), func() {
	It("promotes a spooling child when the owner is SIGKILLed mid-append, with exact contiguous windows", func() {
		path := storePath()
		own := startOwner(path, fast(), nil)
		const appends, per = 12, 10
		var steps []rt.Step
		for j := range appends {
			steps = append(steps, appendGen("s", "p", j*per, per).Named(fmt.Sprintf("append-%d", j)))
		}
		steps = append(steps, waitRole(owner.RoleOwner).Named("become-owner"), scan("s").Named("scan"))
		p := startProducer(path, fast(), nil, steps...)
		Expect(p.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		p.MustStepNamed("append-2", wait) // three appends went through the owner
		Expect(own.Kill()).To(Succeed())

		for j := range appends {
			res := appendResult(p.MustStepNamed(fmt.Sprintf("append-%d", j), wait))
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event",
				From: int64(j*per + 1), To: int64((j + 1) * per), Appended: per}), "append %d", j)
		}
		p.MustStepNamed("become-owner", wait)
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(appends * per))
		for i, r := range recs {
			Expect(r["_seq"]).To(BeEquivalentTo(fmt.Sprint(i + 1)))
			Expect(r["k"]).To(Equal(rt.GenKey("p", i)))
		}
	})

	It("lets a short-lived child append while the owner runs, without becoming the owner", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		cli := startProducer(path, fast(), nil, appendGen("s", "cli", 0, 5).Named("append"), closeStore())
		l := cli.MustStepNamed("append", wait)
		Expect(l.Role).To(Equal(string(owner.RoleNonOwner)))
		Expect(appendResult(l)).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 5, Appended: 5}))
		cli.MustFinish(wait)
		for _, l := range cli.Lines() {
			Expect(l.Role).NotTo(Equal(string(owner.RoleOwner)), "%s", l)
		}

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(5))
		own.MustFinish(wait)
	})

	It("lets a child that finds no owner drain a backlog left by others, then release the store", func() {
		path := storePath()
		own := startOwner(path, fast(), nil)
		Expect(own.Stop()).To(Succeed())
		p := startProducer(path, fast(), nil,
			publishGen("s", "b0", 0, 5), publishGen("s", "b1", 0, 5), publishGen("s", "b2", 0, 5), exitNow())
		_, err := p.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.ExitCode()).To(Equal(0))
		Expect(own.Kill()).To(Succeed())
		Expect(incoming(path)).To(HaveLen(3))

		cli := startProducer(path, fast(), nil, closeStore().Named("close"))
		Expect(cli.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleOwner)))
		cli.MustStepNamed("close", wait)
		cli.MustFinish(wait)
		Expect(incoming(path)).To(BeEmpty())
		_, err = owner.ReadState(owner.PathsFor(path).State)
		Expect(err).To(MatchError(owner.ErrNoState))
		release, err := owner.Exclusive(owner.PathsFor(path).Lock, "")
		Expect(err).NotTo(HaveOccurred(), "the lock is free")
		Expect(release()).To(Succeed())

		counts := keyCounts(finalRows(path, "s"))
		Expect(counts).To(HaveLen(15))
		for _, prefix := range []string{"b0", "b1", "b2"} {
			for _, k := range genKeys(prefix, 0, 5) {
				Expect(counts).To(HaveKeyWithValue(k, 1))
			}
		}
	})

	It("elects exactly one of three spooling children when the owner is killed, losing no batch", func() {
		path := storePath()
		own := startOwner(path, fast(), nil)
		const appends, per = 8, 5
		ps := make([]*rt.Child, 3)
		for i := range ps {
			var steps []rt.Step
			for j := range appends {
				steps = append(steps, appendGen("s", fmt.Sprintf("p%d", i), j*per, per).Named(fmt.Sprintf("append-%d", j)))
			}
			ps[i] = startProducer(path, fast(), nil, append(steps, hold(), closeStore())...)
		}
		for _, p := range ps {
			p.MustStepNamed("append-0", wait)
		}
		Expect(own.Kill()).To(Succeed())

		var windows [][2]int64
		for _, p := range ps {
			for j := range appends {
				res := appendResult(p.MustStepNamed(fmt.Sprintf("append-%d", j), wait))
				Expect(res.Appended).To(BeEquivalentTo(per))
				windows = append(windows, [2]int64{res.From, res.To})
			}
		}
		owners := func() []int {
			var pids []int
			for _, p := range ps {
				if p.Role() == string(owner.RoleOwner) {
					pids = append(pids, p.Pid())
				}
			}
			return pids
		}
		Eventually(owners, wait, 20*time.Millisecond).Should(HaveLen(1))
		Consistently(owners, time.Second, 50*time.Millisecond).Should(HaveLen(1))
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.PID).To(Equal(owners()[0]))
		Expect(st.Phase).To(Equal(owner.PhaseReady))

		slices.SortFunc(windows, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		next := int64(1)
		for _, w := range windows {
			Expect(w[0]).To(Equal(next), "windows %v", windows)
			next = w[1] + 1
		}
		for _, p := range ps {
			Expect(p.Release()).To(Succeed())
		}
		for _, p := range ps {
			p.MustFinish(wait)
		}
		counts := keyCounts(finalRows(path, "s"))
		Expect(counts).To(HaveLen(3 * appends * per))
		for k, n := range counts {
			Expect(n).To(Equal(1), "key %s", k)
		}
	})

	It("ingests a batch published after the owner's final drain (post-unlock recheck)", func() {
		path := storePath()
		own := startOwner(path, fast(), []rt.FailpointRule{failpoint(owner.FailAfterFinalDrain, rt.ActBlock)})
		p := startProducer(path, fast(), nil, hold(), publishGen("s", "late", 0, 4).Named("publish-late"), exitNow())
		p.MustStepNamed("open", wait)
		Expect(own.Release()).To(Succeed()) // the owner closes, and blocks after its final drain
		fp := own.MustEvent(rt.EventFailpoint, wait)
		Expect(fp.Name).To(Equal(owner.FailAfterFinalDrain))
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Phase).To(Equal(owner.PhaseDraining), "a closing owner says so in its state file")
		Expect(p.Release()).To(Succeed()) // the producer publishes and exits
		p.MustStepNamed("publish-late", wait)
		_, err = p.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(incoming(path)).To(HaveLen(1))

		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
		Expect(incoming(path)).To(BeEmpty(), "the closing owner ingested the late batch")
		Expect(keyCounts(finalRows(path, "s"))).To(Equal(map[string]int{
			rt.GenKey("late", 0): 1, rt.GenKey("late", 1): 1, rt.GenKey("late", 2): 1, rt.GenKey("late", 3): 1}))
	})

	It("lets a closing owner go while a producer keeps publishing: the producer takes over and every batch is ingested once", func() {
		path := storePath()
		const drain = 2 * time.Second
		own := startOwner(path, with(func(o *rt.StoreOptions) { o.DrainOnClose = drain }),
			[]rt.FailpointRule{failpoint(owner.FailAfterFinalDrain, rt.ActBlock)})
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, StartWait: wait, Open: sqliteOpener(path)})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))

		// Batches published without waiting, one every millisecond or
		// so: the spool is never empty for long, and the closing owner's
		// recheck finds more after each round. (Rounds this fast leave
		// the producer's promoter its chance; where each round also
		// ships to a replica, an owner that went straight from one round
		// to the next kept the lock for minutes: the replica crash spec.)
		ctx, stop := context.WithCancel(context.Background())
		var published atomic.Int64
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for i := 0; ctx.Err() == nil; i++ {
				_, err := s.Publish(context.Background(), eventBatch(fmt.Sprintf("k%06d", i)))
				Expect(err).NotTo(HaveOccurred())
				published.Add(1)
				time.Sleep(time.Millisecond)
			}
		}()
		Eventually(published.Load).WithTimeout(wait).Should(BeNumerically(">=", 20))
		Expect(own.Release()).To(Succeed()) // the owner closes, and blocks after its final drain
		Expect(own.MustEvent(rt.EventFailpoint, wait).Name).To(Equal(owner.FailAfterFinalDrain))
		// Long enough for the producer's promoter to go back to its
		// normal pace after the fast tries the subscription's end started.
		time.Sleep(500 * time.Millisecond)
		Expect(own.Release()).To(Succeed())
		Eventually(s.Role).WithTimeout(wait).Should(Equal(owner.RoleOwner), "the producer takes the store over")
		own.MustFinish(wait)
		stop()
		<-done

		// The new owner ingests what is left; each batch is in once.
		Expect(s.Close()).To(Succeed())
		recs := finalRows(path, "s")
		Expect(recs).To(HaveLen(int(published.Load())))
		for k, n := range keyCounts(recs) {
			Expect(n).To(Equal(1), "key %s", k)
		}
	})

	It("makes a child opening during the owner's start-up wait until the owner is ready", func() {
		path := storePath()
		first := startProducer(path, fast(), []rt.FailpointRule{failpoint(owner.FailDuringStarting, rt.ActPause)},
			declare(eventKind()).Named("declare"), hold(), closeStore())
		first.MustEvent(rt.EventFailpoint, wait)
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Phase).To(Equal(owner.PhaseStarting))
		Expect(st.PID).To(Equal(first.Pid()))

		impatient := startProducer(path, with(func(o *rt.StoreOptions) { o.StartWait = 300 * time.Millisecond }), nil)
		l, err := impatient.StepNamed("open", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.OK).To(BeFalse())
		Expect(l.Error).To(ContainSubstring("did not become ready"))

		second := startProducer(path, fast(), nil, hold(), closeStore())
		second.MustEvent(rt.EventStart, wait)
		_, err = second.StepNamed("open", 500*time.Millisecond)
		Expect(err).To(HaveOccurred(), "the second child opened while the owner was starting")

		Expect(first.Cont()).To(Succeed())
		Expect(first.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleOwner)))
		Expect(second.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		first.MustStepNamed("declare", wait)
		Expect(first.Release()).To(Succeed())
		first.MustFinish(wait)
		Expect(second.Release()).To(Succeed())
		second.MustFinish(wait)
	})

	It("refuses an exclusive lock held by another process, naming its pid", func() {
		path := storePath()
		own := startOwner(path, fast(), nil)
		paths := owner.PathsFor(path)
		_, err := owner.Exclusive(paths.Lock, paths.State)
		Expect(err).To(MatchError(owner.ErrLocked))
		var le *owner.LockedError
		Expect(errors.As(err, &le)).To(BeTrue())
		Expect(le.Owner).NotTo(BeNil())
		Expect(le.Owner.PID).To(Equal(own.Pid()))
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("pid %d", own.Pid())))

		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
		release, err := owner.Exclusive(paths.Lock, paths.State)
		Expect(err).NotTo(HaveOccurred())
		Expect(release()).To(Succeed())
	})

	It("reports a stopped owner as stale while producers' batches wait, durable, and are ingested once it resumes", func() {
		path := storePath()
		const beat = 200 * time.Millisecond
		own := startOwner(path, with(func(o *rt.StoreOptions) { o.Heartbeat = beat }), nil)
		ctx := context.Background()
		Eventually(func() (owner.Status, error) { return owner.ReadStatus(ctx, path, beat) }, wait, 20*time.Millisecond).
			Should(And(HaveField("Stale", false), HaveField("SocketAlive", true), HaveField("State.PID", own.Pid())))

		Expect(own.Stop()).To(Succeed())
		Eventually(func() (bool, error) {
			st, err := owner.ReadStatus(ctx, path, beat)
			return st.Stale && !st.SocketAlive, err
		}, wait, 50*time.Millisecond).Should(BeTrue())

		p := startProducer(path, fast(), nil,
			publishGen("s", "q0", 0, 4).Named("publish-q0"), publishGen("s", "q1", 0, 4).Named("publish-q1"),
			publishGen("s", "q2", 0, 4).Named("publish-q2"), awaitAll().Named("await"), closeStore())
		Expect(p.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		p.MustStepNamed("publish-q2", wait)
		Expect(incoming(path)).To(HaveLen(3))

		Expect(own.Cont()).To(Succeed())
		var results []recordstore.BatchResult
		Expect(p.MustStepNamed("await", wait).Decode(&results)).To(Succeed())
		Expect(results).To(HaveLen(3))
		for _, r := range results {
			Expect(r.Outcome).To(Equal(recordstore.OutcomeCommitted))
		}
		Eventually(func() (bool, error) {
			st, err := owner.ReadStatus(ctx, path, beat)
			return st.Stale, err
		}, wait, 50*time.Millisecond).Should(BeFalse())
		p.MustFinish(wait)
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
		counts := keyCounts(finalRows(path, "s"))
		Expect(counts).To(HaveLen(12))
		for k, n := range counts {
			Expect(n).To(Equal(1), "key %s", k)
		}
	})
})

var _ = Describe("one process opening a store twice", func() {
	It("shares one handle, reference counted", func(ctx SpecContext) {
		path := storePath()
		opts := owner.Options[*sqlite.Backend]{Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion}
		a, err := owner.Open(ctx, opts)
		Expect(err).NotTo(HaveOccurred())
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		rel, err := filepath.Rel(wd, path)
		Expect(err).NotTo(HaveOccurred())
		opts.Path = rel
		b, err := owner.Open(ctx, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(BeIdenticalTo(a))
		Expect(b.Role()).To(Equal(owner.RoleOwner))

		_, err = a.Backend().DeclareKind(ctx, *eventKind())
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Close()).To(Succeed())
		res, err := b.Backend().Append(ctx, "s", "event", []recordstore.Row{{"k": "x"}})
		Expect(err).NotTo(HaveOccurred(), "the first Close left the shared store open")
		Expect(res.To).To(BeEquivalentTo(1))
		Expect(incoming(path)).To(BeEmpty(), "the second open did not write through the spool")
		_, err = owner.Exclusive(owner.PathsFor(path).Lock, "")
		Expect(err).To(MatchError(owner.ErrLocked))

		Expect(b.Close()).To(Succeed())
		Expect(b.Role()).To(Equal(owner.RoleClosed))
		release, err := owner.Exclusive(owner.PathsFor(path).Lock, "")
		Expect(err).NotTo(HaveOccurred(), "the last Close released the lock")
		Expect(release()).To(Succeed())
	})
})
