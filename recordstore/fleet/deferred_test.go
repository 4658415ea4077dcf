// The fleet's stores are opened with the owner election deferred to their
// first write (StoreOptions.EagerElection turns it off).

package fleet_test

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
)

var _ = Describe("Deferred election in a fleet", func() {
	ctx := context.Background()
	// lockFree checks that no process holds the store's lock.
	lockFree := func(p owner.Paths) {
		GinkgoHelper()
		release, err := owner.Exclusive(p.Lock, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(release()).To(Succeed())
	}

	It("opens and reads a store with no election, and elects this process owner at its first write", func() {
		f := openFleet(newRoot(), fleet.Options{})
		Expect(f.Provision(ctx, tenant("a"))).To(Succeed())
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		defer l.Release()
		st := l.Store()
		Expect(st.Backend().Streams(ctx, "")).To(BeEmpty())
		Expect(st.Role()).To(Equal(owner.RoleDeferred))
		p := st.Paths()
		Expect(p.State).NotTo(BeAnExistingFile())
		Expect(p.Socket).NotTo(BeAnExistingFile())
		lockFree(p)

		_, err = st.Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "1"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Role()).To(Equal(owner.RoleOwner))
		Expect(p.State).To(BeAnExistingFile())
		_, err = owner.Exclusive(p.Lock, "")
		Expect(err).To(MatchError(owner.ErrLocked))
	})

	It("elects at open with StoreOptions.EagerElection", func() {
		f := openFleet(newRoot(), fleet.Options{Open: fleet.DefaultOpener(fleet.StoreOptions{EagerElection: true})})
		Expect(f.Provision(ctx, tenant("a"))).To(Succeed())
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		defer l.Release()
		Expect(l.Store().Role()).To(Equal(owner.RoleOwner))
		Expect(l.Store().Paths().State).To(BeAnExistingFile())
	})

	It("closes a store only read here and leaves no state file, socket or held lock", func() {
		f := openFleet(newRoot(), fleet.Options{})
		Expect(f.Provision(ctx, tenant("a"))).To(Succeed())
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		p := l.Store().Paths()
		Expect(l.Store().Backend().Streams(ctx, "")).To(BeEmpty())
		l.Release()
		Expect(f.CloseStore(ctx, tenant("a"))).To(Succeed())
		Expect(f.IsOpen(tenant("a"))).To(BeFalse())
		Expect(p.State).NotTo(BeAnExistingFile())
		Expect(p.Socket).NotTo(BeAnExistingFile())
		lockFree(p)
	})

	It("deletes a store this process has open deferred", func() {
		f := openFleet(newRoot(), fleet.Options{})
		Expect(f.Provision(ctx, tenant("a"))).To(Succeed())
		l, err := f.Acquire(ctx, tenant("a"))
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Store().Role()).To(Equal(owner.RoleDeferred))
		path := l.Store().Paths().Config
		l.Release()
		Expect(f.Delete(ctx, tenant("a"))).To(Succeed())
		_, err = os.Stat(path)
		Expect(os.IsNotExist(err)).To(BeTrue())
	})
})
