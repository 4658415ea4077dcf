// Specs of the single-flight open and the LRU of open stores.

package fleet_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Opening stores", func() {
	var (
		root   string
		clk    *clock
		opened atomic.Int64
		ctx    = context.Background()
	)
	// lruFleet opens a fleet whose opener counts its opens, provisioned
	// with the given tenants.
	lruFleet := func(opts fleet.Options, ids ...string) *fleet.Fleet {
		opts.Now = clk.now
		base := fleet.DefaultOpener(fleet.StoreOptions{})
		opts.Open = func(ctx context.Context, path string) (*fleet.Store, error) {
			opened.Add(1)
			return base(ctx, path)
		}
		f := openFleet(root, opts)
		for _, id := range ids {
			Expect(f.Provision(ctx, tenant(id))).To(Succeed())
		}
		return f
	}
	// use acquires and releases the store of id.
	use := func(f *fleet.Fleet, id string) {
		l, err := f.Acquire(ctx, tenant(id))
		Expect(err).NotTo(HaveOccurred())
		l.Release()
	}
	open := func(f *fleet.Fleet, ids ...string) []string {
		var out []string
		for _, id := range ids {
			if f.IsOpen(tenant(id)) {
				out = append(out, id)
			}
		}
		return out
	}
	BeforeEach(func() {
		root = newRoot()
		clk = newClock()
		opened.Store(0)
	})

	It("shares one open among 16 concurrent first opens", func() {
		f := lruFleet(fleet.Options{}, "acme")
		var wg sync.WaitGroup
		stores := make([]*fleet.Store, 16)
		for i := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				l, err := f.Acquire(ctx, tenant("acme"))
				Expect(err).NotTo(HaveOccurred())
				stores[i] = l.Store()
				l.Release()
			}()
		}
		wg.Wait()
		Expect(opened.Load()).To(Equal(int64(1)))
		Expect(f.Stats().Opens).To(Equal(int64(1)))
		for _, st := range stores {
			Expect(st).To(BeIdenticalTo(stores[0]))
		}
	})

	It("closes the least recently used idle store past max_open", func() {
		f := lruFleet(fleet.Options{MaxOpen: 2, MinResidency: time.Second}, "a", "b", "c")
		use(f, "a")
		clk.advance(time.Second)
		use(f, "b")
		clk.advance(time.Second)
		use(f, "c")
		clk.advance(time.Second)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(open(f, "a", "b", "c")).To(ConsistOf("b", "c"))
		Expect(f.Stats().Evictions).To(Equal(int64(1)))
	})

	It("never closes a store in use, closing the next idle one instead", func() {
		f := lruFleet(fleet.Options{MaxOpen: 2, MinResidency: time.Second}, "a", "b", "c")
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		clk.advance(time.Second)
		use(f, "b")
		clk.advance(time.Second)
		use(f, "c")
		clk.advance(10 * time.Second)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(open(f, "a", "b", "c")).To(ConsistOf("a", "c"))
		l.Release()
	})

	It("never closes a store used within min_residency, even past max_open", func() {
		f := lruFleet(fleet.Options{MaxOpen: 1, MinResidency: 2 * time.Second}, "a", "b", "c")
		use(f, "a")
		use(f, "b")
		use(f, "c")
		clk.advance(2*time.Second - time.Millisecond)
		Expect(f.Sweep(ctx)).To(BeZero())
		Expect(open(f, "a", "b", "c")).To(HaveLen(3))
		clk.advance(time.Millisecond)
		Expect(f.Sweep(ctx)).To(Equal(2))
		Expect(f.Stats().Open).To(Equal(1))
	})

	It("closes a store idle for idle_close", func() {
		f := lruFleet(fleet.Options{IdleClose: time.Minute}, "a", "b")
		use(f, "a")
		clk.advance(30 * time.Second)
		use(f, "b")
		clk.advance(30 * time.Second)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(open(f, "a", "b")).To(ConsistOf("b"))
		Expect(f.Stats().IdleCloses).To(Equal(int64(1)))
	})

	It("keeps a store open while a lease holds it, past idle_close and max_open", func() {
		f := lruFleet(fleet.Options{IdleClose: time.Minute, MaxOpen: 1, MinResidency: -1}, "a", "b")
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		use(f, "b")
		clk.advance(time.Hour)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(open(f, "a", "b")).To(ConsistOf("a"))
		Expect(l.Store().Backend().Kinds(ctx)).To(HaveLen(1))
		l.Release()
		clk.advance(time.Hour)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(f.Stats().Open).To(BeZero())
	})

	It("drains a closing store's calls, and an opener of it waits and reopens it fresh", func() {
		f := lruFleet(fleet.Options{}, "a")
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		first := l.Store()
		closed := make(chan error, 1)
		go func() { closed <- f.CloseStore(ctx, tenant("a")) }()
		Eventually(func() int { return f.Stats().Draining }).Should(Equal(1))
		reopened := make(chan *fleet.Store, 1)
		go func() {
			defer GinkgoRecover()
			l2, err := f.Acquire(ctx, tenant("a"))
			Expect(err).NotTo(HaveOccurred())
			reopened <- l2.Store()
			l2.Release()
		}()
		Consistently(closed).ShouldNot(Receive())
		Expect(reopened).NotTo(Receive())
		// The in-flight call still works on the draining store.
		Expect(first.Backend().Kinds(ctx)).To(HaveLen(1))
		l.Release()
		Eventually(closed).Should(Receive(BeNil()))
		var second *fleet.Store
		Eventually(reopened).Should(Receive(&second))
		Expect(second).NotTo(BeIdenticalTo(first))
		Expect(opened.Load()).To(Equal(int64(2)))
	})

	It("refuses opens after Close", func() {
		f := lruFleet(fleet.Options{}, "a")
		use(f, "a")
		Expect(f.Close()).To(Succeed())
		_, err := f.Acquire(ctx, tenant("a"))
		Expect(err).To(MatchError(recordstore.ErrClosed))
	})

	It("gives up waiting for a lease when CloseContext's context ends, closing the others, and the last Release closes the store left", func() {
		f := lruFleet(fleet.Options{}, "a", "b")
		use(f, "b")
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		// A write elects this process the store's owner (the election is
		// deferred to it).
		_, err = l.Store().Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "1"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		state := l.Store().Paths().State
		bounded, cancel := context.WithCancel(ctx)
		cancel()
		err = f.CloseContext(bounded)
		Expect(err).To(MatchError(context.Canceled))
		Expect(err.Error()).To(ContainSubstring("tenant:a"))
		Expect(err.Error()).NotTo(ContainSubstring("tenant:b"))
		Expect(open(f, "a", "b")).To(ConsistOf("a"))
		// The leased store stays usable and owned: its state file is there.
		Expect(l.Store().Backend().Kinds(ctx)).To(HaveLen(1))
		Expect(l.Store().Role()).To(Equal(owner.RoleOwner))
		Expect(state).To(BeAnExistingFile())
		_, err = f.Acquire(ctx, tenant("b"))
		Expect(err).To(MatchError(recordstore.ErrClosed))
		l.Release()
		Expect(open(f, "a", "b")).To(BeEmpty())
		Expect(state).NotTo(BeAnExistingFile())
		Expect(f.Stats().Closes).To(Equal(int64(2)))
		Expect(f.CloseContext(bounded)).To(Succeed())
	})

	It("waits for a lease again when CloseContext is called after giving up", func() {
		f := lruFleet(fleet.Options{}, "a")
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		bounded, cancel := context.WithCancel(ctx)
		cancel()
		Expect(f.CloseContext(bounded)).To(MatchError(context.Canceled))
		closed := make(chan error, 1)
		go func() { closed <- f.CloseContext(ctx) }()
		Eventually(func() int { return f.Stats().Draining }).Should(Equal(1))
		Consistently(closed).ShouldNot(Receive())
		l.Release()
		Eventually(closed).Should(Receive(BeNil()))
		Expect(f.IsOpen(tenant("a"))).To(BeFalse())
	})
})
