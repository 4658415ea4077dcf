// Specs for Options.CatchUp: two "hosts" (two store folders) share one
// replica, their lease played by a switchable fence.

package records_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/replica"
)

// switchFence is a lease another host holds while held is set.
type switchFence struct {
	mu      sync.Mutex
	held    bool
	holding bool
	gen     int64
}

func (f *switchFence) Acquire(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held {
		return 0, owner.ErrFenceHeld
	}
	f.gen++
	f.holding = true
	return f.gen, nil
}

func (f *switchFence) Check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.holding {
		return errors.New("not held")
	}
	return nil
}

func (f *switchFence) Release(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holding = false
	return nil
}

func (f *switchFence) Status() owner.FenceStatus { return owner.FenceStatus{Target: "switch://"} }

func (f *switchFence) hold(held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = held
}

var _ = Describe("Options.CatchUp", func() {
	It("restores a copy for a host without the store, and at its promotion restores what the other host wrote meanwhile", func() {
		ctx := context.Background()
		dir := GinkgoT().TempDir()
		url := "file://" + filepath.Join(dir, "replica")
		pathA, pathB := filepath.Join(dir, "a", "records.sqlite"), filepath.Join(dir, "b", "records.sqlite")
		fenceA, fenceB := &switchFence{}, &switchFence{}
		open := func(path string, f *switchFence) (*records.Store, error) {
			rep, err := replica.New(url, replica.Options{})
			Expect(err).NotTo(HaveOccurred())
			return records.Open(ctx, path, records.Options{
				Owner:   records.OwnerOptions{Replica: rep, Fence: f, StartWait: waitLong},
				CatchUp: replica.CatchUpFunc(path, url, nil),
			})
		}
		appendOn := func(st *records.Store, msgs ...string) {
			rows := make([]recordstore.Row, len(msgs))
			for i, m := range msgs {
				rows[i] = recordstore.Row{"msg": m}
			}
			_, err := st.Append(ctx, "s", "events", rows, owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.WaitReplicated(ctx)).To(Succeed())
		}
		count := func(st *records.Store) int {
			recs, err := st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
			Expect(err).NotTo(HaveOccurred())
			return len(recs)
		}

		// Host A owns the store and ships three rows.
		a, err := open(pathA, fenceA)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Role()).To(Equal(owner.RoleOwner))
		_, err = a.DeclareKinds(ctx, []recordstore.Kind{events}, owner.WriteOptions{})
		Expect(err).NotTo(HaveOccurred())
		appendOn(a, "a0", "a1", "a2")

		// Host B, with no store, while A holds the lease: a copy to read.
		fenceB.hold(true)
		b, err := open(pathB, fenceB)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Role()).To(Equal(owner.RoleNonOwner))
		Expect(count(b)).To(Equal(3))

		// A writes on, then stops; B takes the lease.
		appendOn(a, "a3", "a4")
		Expect(a.Close()).To(Succeed())
		fenceB.hold(false)

		// B's catch-up restores the replica under the file it had open:
		// that promotion is refused, the store gone for this process.
		Eventually(b.Gone, waitLong).ShouldNot(BeNil())
		Expect(b.Role()).NotTo(Equal(owner.RoleOwner))
		Expect(b.Close()).To(Succeed())

		// Reopened, B owns the restored file: every row A shipped.
		b, err = open(pathB, fenceB)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Role()).To(Equal(owner.RoleOwner))
		Expect(count(b)).To(Equal(5))
		appendOn(b, "b0")
		Expect(b.Close()).To(Succeed())

		// A, back, is behind the replica: it catches up before it writes.
		a, err = open(pathA, fenceA)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Role()).To(Equal(owner.RoleOwner))
		Expect(count(a)).To(Equal(6))
		Expect(a.Close()).To(Succeed())
	})
})
