// Deferred election (Options.DeferElection): reads without an election,
// the first write elects, once, and a failed election holds nothing.

package owner_test

import (
	"context"
	"fmt"
	"os"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// deferredEvents records the roles a deferred store goes through.
type deferredEvents struct {
	mu    sync.Mutex
	roles []owner.Role
}

func (e *deferredEvents) role(r owner.Role) {
	e.mu.Lock()
	e.roles = append(e.roles, r)
	e.mu.Unlock()
}

func (e *deferredEvents) count(r owner.Role) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, got := range e.roles {
		if got == r {
			n++
		}
	}
	return n
}

// openDeferred opens the store at path here with DeferElection.
func openDeferred(ctx context.Context, path string, ev *deferredEvents) *owner.Store[*sqlite.Backend] {
	GinkgoHelper()
	s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		DeferElection: true, PollMin: fast().PollMin, PollMax: fast().PollMax,
		Events: owner.Events{Role: ev.role},
	})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// createStore makes a store at path with the event kind and one row in
// stream "s", closes it, and removes its lock file: what a deferred open
// creates is then visible.
func createStore(ctx context.Context, path string) {
	GinkgoHelper()
	s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion})
	Expect(err).NotTo(HaveOccurred())
	_, err = s.Append(ctx, "s", "event", []recordstore.Row{row("first")}, owner.AppendOptions{Declare: eventKind()})
	Expect(err).NotTo(HaveOccurred())
	Expect(s.Close()).To(Succeed())
	Expect(os.Remove(owner.PathsFor(path).Lock)).To(Succeed())
}

// expectNoElectionFiles checks that no lock file, state file or socket
// exists beside path.
func expectNoElectionFiles(path string) {
	GinkgoHelper()
	p := owner.PathsFor(path)
	for _, f := range []string{p.Lock, p.State, p.Socket} {
		_, err := os.Stat(f)
		Expect(os.IsNotExist(err)).To(BeTrue(), "%s does not exist: %v", f, err)
	}
}

var _ = Describe("Deferred election", func() {
	It("reads at once with no lock, state file or socket, and Close leaves none behind", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		ev := &deferredEvents{}
		s := openDeferred(ctx, path, ev)
		Expect(s.Role()).To(Equal(owner.RoleDeferred))
		recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(keyCounts(recs)).To(Equal(map[string]int{"first": 1}))
		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Role).To(Equal(owner.RoleDeferred))
		expectNoElectionFiles(path)
		Expect(s.Close()).To(Succeed())
		Expect(s.Role()).To(Equal(owner.RoleClosed))
		expectNoElectionFiles(path)
		Expect(ev.count(owner.RoleOwner)).To(Equal(0))
	})

	It("elects this process owner at the first write when the lock is free", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		s := openDeferred(ctx, path, &deferredEvents{})
		out, err := s.Append(ctx, "s", "event", []recordstore.Row{row("second")}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Spooled).To(BeFalse(), "applied directly by the new owner")
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.PID).To(Equal(os.Getpid()))
		Expect(st.Phase).To(Equal(owner.PhaseReady))
		Expect(s.Close()).To(Succeed())
		_, err = os.Stat(owner.PathsFor(path).State)
		Expect(os.IsNotExist(err)).To(BeTrue(), "the owner's Close removed its state file")
		Expect(finalRows(path, "s")).To(HaveLen(2))
	})

	It("elects on a write made on the backend itself", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		s := openDeferred(ctx, path, &deferredEvents{})
		_, err := s.Backend().Append(ctx, "s", "event", []recordstore.Row{row("direct")})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(keyCounts(recs)).To(Equal(map[string]int{"first": 1, "direct": 1}))
		Expect(s.Close()).To(Succeed())
	})

	It("sends the first write through the spool and gets its result when another process owns the store", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		DeferCleanup(func() { _ = own.Kill() })
		ev := &deferredEvents{}
		s := openDeferred(ctx, path, ev)
		Expect(s.Role()).To(Equal(owner.RoleDeferred))
		out, err := s.Append(ctx, "s", "event", []recordstore.Row{row("spooled")}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Spooled).To(BeTrue())
		Expect(out.Appended).To(Equal(int64(1)))
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		Eventually(func() (map[string]int, error) {
			recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
			return keyCounts(recs), err
		}, wait).Should(Equal(map[string]int{"spooled": 1}))
		Expect(s.Close()).To(Succeed())
		Expect(ev.count(owner.RoleOwner)).To(Equal(0))
	})

	It("runs one election for eight concurrent first writes", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		ev := &deferredEvents{}
		s := openDeferred(ctx, path, ev)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Append(ctx, "s", "event", []recordstore.Row{row(fmt.Sprintf("w%d", i))}, owner.AppendOptions{})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(ev.count(owner.RoleOwner)).To(Equal(1), "one election")
		recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(9))
		Expect(s.Close()).To(Succeed())
	})

	It("holds nothing after a failed election, and the next write elects", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		p := owner.PathsFor(path)
		Expect(os.Mkdir(p.State, 0o700)).To(Succeed()) // the state file cannot be written
		s := openDeferred(ctx, path, &deferredEvents{})
		_, err := s.Append(ctx, "s", "event", []recordstore.Row{row("refused")}, owner.AppendOptions{})
		Expect(err).To(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleDeferred))
		release, err := owner.Exclusive(p.Lock, "")
		Expect(err).NotTo(HaveOccurred(), "the failed election let the lock go")
		Expect(release()).To(Succeed())
		_, err = os.Stat(p.Socket)
		Expect(os.IsNotExist(err)).To(BeTrue(), "no socket was served")

		Expect(os.Remove(p.State)).To(Succeed())
		_, err = s.Append(ctx, "s", "event", []recordstore.Row{row("retried")}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Expect(s.Close()).To(Succeed())
		Expect(keyCounts(finalRows(path, "s"))).To(Equal(map[string]int{"first": 1, "retried": 1}))
	})

	It("elects at once when there is no live file to read yet", func(ctx SpecContext) {
		path := storePath()
		s := openDeferred(ctx, path, &deferredEvents{})
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Expect(s.Close()).To(Succeed())
	})

	Context("in a real child", func() {
		deferred := func() *rt.StoreOptions { return with(func(o *rt.StoreOptions) { o.DeferElection = true }) }

		It("reads, is killed, and leaves nothing held or to recover", func(ctx SpecContext) {
			path := storePath()
			createStore(ctx, path)
			c := startProducer(path, deferred(), nil, scan("s").Named("read"), hold().Named("hold"))
			Expect(c.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleDeferred)))
			Expect(string(c.MustStepNamed("read", wait).Result)).To(ContainSubstring(`"first"`))
			expectNoElectionFiles(path) // the child is holding, its store open
			Expect(c.Kill()).To(Succeed())
			expectNoElectionFiles(path)
			s := openDeferred(ctx, path, &deferredEvents{})
			_, err := s.Append(ctx, "s", "event", []recordstore.Row{row("after")}, owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Role()).To(Equal(owner.RoleOwner), "no owner was left behind")
			Expect(s.Close()).To(Succeed())
		})

		It("becomes the owner at its first write, and this process then writes through its spool", func(ctx SpecContext) {
			path := storePath()
			createStore(ctx, path)
			c := startProducer(path, deferred(), nil, appendGen("s", "child", 0, 3).Named("write"), hold().Named("hold"))
			DeferCleanup(func() { _ = c.Kill() })
			Expect(c.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleDeferred)))
			Expect(c.MustStepNamed("write", wait).Role).To(Equal(string(owner.RoleOwner)))
			s := openDeferred(ctx, path, &deferredEvents{})
			out, err := s.Append(ctx, "s", "event", []recordstore.Row{row("here")}, owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Spooled).To(BeTrue(), "the child owns the store")
			Expect(s.Role()).To(Equal(owner.RoleNonOwner))
			Expect(s.Close()).To(Succeed())
		})
	})
})
