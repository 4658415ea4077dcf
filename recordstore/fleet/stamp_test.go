// Specs of the identity read skipped on opening a store this process
// closed or created, and read again whenever the file changed meanwhile.

package fleet_test

import (
	"context"
	"os"

	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Skipping the identity read of a store this process checked or made", func() {
	var (
		f     *fleet.Fleet
		ctx   = context.Background()
		reads []string
		acme  string
		beta  string
	)
	BeforeEach(func() {
		root := newRoot()
		f = openFleet(root, fleet.Options{})
		// Made by another fleet handle, as by another process: the first
		// open here reads the identity.
		maker := openFleet(root, fleet.Options{})
		Expect(maker.Provision(ctx, tenant("acme"))).To(Succeed())
		Expect(maker.Provision(ctx, tenant("beta"))).To(Succeed())
		acme, _ = f.Path(tenant("acme"))
		beta, _ = f.Path(tenant("beta"))
		reads = nil
		f.SetIdentityRead(func(abs string) { reads = append(reads, abs) })
		appendNote(f, tenant("acme"), "n1")
		Expect(f.CloseStore(ctx, tenant("acme"))).To(Succeed())
		Expect(reads).To(Equal([]string{acme}))
	})

	It("skips the identity read when the file is as it was closed, and keeps the data", func() {
		Expect(notes(f, tenant("acme"))).To(Equal([]string{"n1"}))
		Expect(reads).To(Equal([]string{acme}))
		Expect(f.CloseStore(ctx, tenant("acme"))).To(Succeed())
		appendNote(f, tenant("acme"), "n2")
		Expect(reads).To(Equal([]string{acme}))
	})

	DescribeTable("reads the identity again, and refuses a misplaced file, when the file changed while closed",
		func(change func()) {
			change()
			_, err := f.Acquire(ctx, tenant("acme"))
			Expect(err).To(MatchError(fleet.ErrMisplaced))
			Expect(err.Error()).To(ContainSubstring("tenant:beta"))
			Expect(reads).To(Equal([]string{acme, acme}))
		},
		Entry("another store's file written over it in place (same inode)", func() {
			data, err := os.ReadFile(beta)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(acme, data, 0o600)).To(Succeed())
		}),
		Entry("another store's file renamed over it (another inode)", func() {
			data, err := os.ReadFile(beta)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(acme+".new", data, 0o600)).To(Succeed())
			Expect(os.Rename(acme+".new", acme)).To(Succeed())
		}),
	)

	It("skips the identity read of a store this process provisioned, also after a Delete", func() {
		Expect(f.Delete(ctx, tenant("acme"))).To(Succeed())
		Expect(f.Provision(ctx, tenant("acme"))).To(Succeed())
		l, err := f.Acquire(ctx, tenant("acme"))
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Store().Backend().Streams(ctx, "")).To(BeEmpty())
		l.Release()
		Expect(reads).To(Equal([]string{acme}))
	})

	It("skips the second identity read of a store it creates on demand", func() {
		slots := openFleet(newRoot(), fleet.Options{Mode: fleet.ModeSlot})
		var slotReads int
		slots.SetIdentityRead(func(string) { slotReads++ })
		l, err := slots.Acquire(ctx, fleet.RoutingKey("user-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Store().Backend().Kinds(ctx)).To(HaveLen(1))
		l.Release()
		Expect(slotReads).To(Equal(1)) // the read that found no file
	})
})
