// The owner's use of its Fence (Options.Fence), with a scripted one: taken
// before the owner writes, checked before every commit, and, once lost, a
// typed error for every write and a step-down that lets everything go.

package owner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// scriptedFence is a Fence whose lease the spec holds elsewhere (held) or
// takes away (lost).
type scriptedFence struct {
	mu       sync.Mutex
	gen      int64
	holding  bool
	held     bool // another process holds the lease
	lost     bool
	acquires int
	releases int
	checks   int
}

type heldErr struct{}

func (heldErr) Error() string     { return "lease held by host-b" }
func (heldErr) ErrorCode() string { return "in_use" }

func (f *scriptedFence) Acquire(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acquires++
	if f.held {
		return 0, heldErr{}
	}
	f.gen++
	f.holding, f.lost = true, false
	return f.gen, nil
}

func (f *scriptedFence) Check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	if f.lost || !f.holding {
		return errors.New("lease lost: not renewed in time")
	}
	return nil
}

func (f *scriptedFence) Release(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holding {
		f.releases++
	}
	f.holding = false
	return nil
}

func (f *scriptedFence) Status() owner.FenceStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := owner.FenceStatus{Target: "scripted://", Owner: "host-a"}
	if f.holding {
		st.Generation = f.gen
	}
	return st
}

func (f *scriptedFence) set(fn func(f *scriptedFence)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *scriptedFence) count() (acquires, releases, checks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acquires, f.releases, f.checks
}

func rowsIn(s *owner.Store[*sqlite.Backend], stream string) int {
	recs, err := s.Backend().Scan(context.Background(), stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	return len(recs)
}

var _ = Describe("the owner's fence", func() {
	It("is taken before the owner writes, checked before each commit; once lost, every write fails typed and the owner steps down for good", func() {
		path := storePath()
		paths := owner.PathsFor(path)
		fence := &scriptedFence{gen: 6}
		rep := &recordingReplicator{statePath: paths.State}
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion, StartWait: wait,
			Replica: rep, Fence: fence,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		ctx := context.Background()
		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Lease).NotTo(BeNil())
		Expect(st.Lease.Generation).To(Equal(int64(7)))

		_, err = s.DeclareKinds(ctx, []recordstore.Kind{*eventKind()}, owner.WriteOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, _, before := fence.count()
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "a"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, _, after := fence.count()
		Expect(after).To(BeNumerically(">", before), "the append checked the lease")

		fence.set(func(f *scriptedFence) { f.lost = true })
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "b"}}, owner.AppendOptions{})
		var fenced *owner.FencedError
		Expect(errors.As(err, &fenced)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, owner.ErrFenced)).To(BeTrue())
		Expect(recordstore.Code(err)).To(Equal("fenced"))
		Expect(rowsIn(s, "e")).To(Equal(1), "nothing of the refused append was committed")

		Eventually(s.Role, wait).Should(Equal(owner.RoleNonOwner))
		Eventually(func() bool { _, err := os.Stat(paths.State); return os.IsNotExist(err) }, wait).Should(BeTrue(), "the state file goes")
		Expect(rep.seen()).To(ContainElement("stop"), "replication stopped")
		_, releases, _ := fence.count()
		Expect(releases).To(Equal(1))

		// The lease free again, the process still never writes: not
		// directly, not through the spool, and it does not take it back.
		fence.set(func(f *scriptedFence) { f.lost = false })
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "c"}}, owner.AppendOptions{})
		Expect(recordstore.Code(err)).To(Equal("fenced"), "%v", err)
		_, err = s.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "e"}, owner.WriteOptions{})
		Expect(recordstore.Code(err)).To(Equal("fenced"), "%v", err)
		Consistently(s.Role, "300ms").Should(Equal(owner.RoleNonOwner))
		acquires, _, _ := fence.count()
		Expect(acquires).To(Equal(1))
		Expect(s.Close()).To(Succeed())
		again := openInProcess(path, nil)
		Expect(rowsIn(again, "e")).To(Equal(1))
		Expect(again.Close()).To(Succeed())
	})

	It("rotates nothing once the lease is lost: the old file stays live, no new file is left", func() {
		path := storePath()
		fence := &scriptedFence{}
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion, StartWait: wait, Fence: fence,
		})
		Expect(err).NotTo(HaveOccurred())
		ctx := context.Background()
		_, err = s.DeclareKinds(ctx, []recordstore.Kind{*eventKind()}, owner.WriteOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "a"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		live := s.LiveFile()
		next := filepath.Join(filepath.Dir(live), "next.sqlite")

		fence.set(func(f *scriptedFence) { f.lost = true })
		_, err = s.Rotate(ctx, next)
		// Refused by the fence, or — once the owner stepped down — as a
		// non-owner's: either way nothing is rotated.
		Expect(errors.Is(err, owner.ErrFenced) || errors.Is(err, owner.ErrNotOwner)).To(BeTrue(), "%v", err)
		Expect(s.LiveFile()).To(Equal(live))
		_, err = os.Stat(next)
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(s.Close()).To(Succeed())
		again := openInProcess(path, nil)
		Expect(rowsIn(again, "e")).To(Equal(1))
		Expect(again.Close()).To(Succeed())
	})

	It("steps an idle owner down as soon as its lease is lost", func() {
		path := storePath()
		fence := &scriptedFence{}
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion, StartWait: wait, Fence: fence,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		fence.set(func(f *scriptedFence) { f.lost = true })
		Eventually(s.Role, wait).Should(Equal(owner.RoleNonOwner))
		st, err := s.Status(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Role).To(Equal(owner.RoleNonOwner))
		Expect(s.Close()).To(Succeed())
	})

	It("keeps the process a non-owner while another holds the lease, and makes it the owner once the lease is free", func() {
		path := storePath()
		Expect(openInProcess(path, nil).Close()).To(Succeed()) // the live file exists
		fence := &scriptedFence{held: true}
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion, StartWait: wait, Fence: fence,
		})
		Expect(err).NotTo(HaveOccurred())
		defer func() { Expect(s.Close()).To(Succeed()) }()
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		Consistently(s.Role, "300ms").Should(Equal(owner.RoleNonOwner))
		fence.set(func(f *scriptedFence) { f.held = false })
		Eventually(s.Role, wait).Should(Equal(owner.RoleOwner))
		st, err := s.Status(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Lease.Generation).To(Equal(int64(1)))
	})
})
