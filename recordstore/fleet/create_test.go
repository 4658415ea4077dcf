// Specs of staged create, identity and root containment.

package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Provisioning a store", func() {
	var (
		root string
		f    *fleet.Fleet
		ctx  = context.Background()
	)
	BeforeEach(func() {
		root = newRoot()
		f = openFleet(root, fleet.Options{})
	})

	It("creates a complete store with the fleet's kinds, 0600 in a 0700 bucket, and no staging left", func() {
		k := tenant("acme")
		Expect(f.Provision(ctx, k)).To(Succeed())
		p, err := f.Path(k)
		Expect(err).NotTo(HaveOccurred())
		fi, err := os.Stat(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		di, err := os.Stat(filepath.Dir(p))
		Expect(err).NotTo(HaveOccurred())
		Expect(di.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		rel, _ := filepath.Rel(root, p)
		Expect(listFiles(root)).To(ConsistOf(filepath.Dir(rel)+"/", rel))
		appendNote(f, k, "n1")
		Expect(notes(f, k)).To(Equal([]string{"n1"}))
	})

	It("refuses a second provision of a key with exists", func() {
		k := tenant("acme")
		Expect(f.Provision(ctx, k)).To(Succeed())
		err := f.Provision(ctx, k)
		Expect(err).To(MatchError(fleet.ErrExists))
		Expect(recordstore.Code(err)).To(Equal("exists"))
	})

	It("lets exactly one of 8 concurrent provisions win; the others get exists", func() {
		k := tenant("race")
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f.Provision(ctx, k)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				Expect(err).To(MatchError(fleet.ErrExists))
			}
		}
		Expect(won).To(Equal(1))
		Expect(kindNames(f, k)).To(ConsistOf("notes"))
	})

	It("lets exactly one of 3 processes provisioning one key win; the others get exists", func() {
		var outs [3]bytes.Buffer
		var cmds [3]interface{ Wait() error }
		for i := range cmds {
			cmd := childCmd("provision", root, "tenant:shared")
			cmd.Stdout = &outs[i]
			Expect(cmd.Start()).To(Succeed())
			cmds[i] = cmd
		}
		for _, c := range cmds {
			_ = c.Wait()
		}
		var codes []string
		for i := range outs {
			codes = append(codes, strings.TrimSpace(outs[i].String()))
		}
		Expect(codes).To(ConsistOf("ok", "exists", "exists"))
		Expect(kindNames(f, tenant("shared"))).To(ConsistOf("notes", "events")) // the children's kinds
	})

	It("publishes nothing and leaves no staging folder when the create fails", func() {
		boom := errors.New("boom")
		f.SetBeforePublish(func(string) error { return boom })
		k := tenant("acme")
		Expect(f.Provision(ctx, k)).To(MatchError(boom))
		p, _ := f.Path(k)
		Expect(p).NotTo(BeAnExistingFile())
		Expect(listFiles(root)).To(BeEmpty()) // no staging folder, no bucket folder
		f.SetBeforePublish(nil)
		Expect(f.Provision(ctx, k)).To(Succeed())
	})

	It("refuses a refused id before creating anything", func() {
		_, err := f.KeyFor("Acme")
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(f.Provision(ctx, fleet.Key{Mode: fleet.ModeTenant, Tenant: "../x"})).To(MatchError(recordstore.ErrInvalid))
		Expect(f.Provision(ctx, fleet.Key{Mode: fleet.ModeSlot, Slot: 1})).To(MatchError(recordstore.ErrInvalid))
		Expect(listFiles(root)).To(BeEmpty())
	})

	It("refuses a copied store as misplaced", func() {
		a, b := tenant("alpha"), tenant("beta")
		Expect(f.Provision(ctx, a)).To(Succeed())
		pa, _ := f.Path(a)
		pb, _ := f.Path(b)
		data, err := os.ReadFile(pa)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(filepath.Dir(pb), 0o700)).To(Succeed())
		Expect(os.WriteFile(pb, data, 0o600)).To(Succeed())
		_, err = f.Acquire(ctx, b)
		Expect(err).To(MatchError(fleet.ErrMisplaced))
		Expect(recordstore.Code(err)).To(Equal("misplaced"))
		after, err := os.ReadFile(pb)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(data))
	})

	It("does not create a missing tenant store on open", func() {
		_, err := f.Acquire(ctx, tenant("ghost"))
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(listFiles(root)).To(BeEmpty())
	})

	It("creates a missing slot store on open", func() {
		sf := openFleet(newRoot(), fleet.Options{Mode: fleet.ModeSlot})
		k := fleet.RoutingKey("order-1")
		l, err := sf.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		l.Release()
		Expect(sf.Stats().Creates).To(Equal(int64(1)))
	})
})

var _ = Describe("Root containment", func() {
	var (
		root, outside string
		ctx           = context.Background()
	)
	BeforeEach(func() {
		root = newRoot()
		outside = GinkgoT().TempDir()
	})

	It("refuses a store path that is a symlink", func() {
		f := openFleet(root, fleet.Options{})
		k := tenant("acme")
		rel, _ := f.Template().Path(k)
		p := filepath.Join(root, rel)
		Expect(os.MkdirAll(filepath.Dir(p), 0o700)).To(Succeed())
		Expect(os.Symlink(filepath.Join(outside, "x.db"), p)).To(Succeed())
		_, err := f.Acquire(ctx, k)
		Expect(err).To(MatchError(fleet.ErrOutsideRoot))
		Expect(f.Provision(ctx, k)).To(MatchError(fleet.ErrOutsideRoot))
		Expect(listFiles(outside)).To(BeEmpty())
	})

	It("refuses a bucket folder that links out of the root, also for a missing folder under it", func() {
		f := openFleet(root, fleet.Options{Path: "{bucket}/sub/{tenant}.db"})
		k := tenant("acme")
		Expect(os.Symlink(outside, filepath.Join(root, pad(k.Bucket(), 3)))).To(Succeed())
		Expect(f.Provision(ctx, k)).To(MatchError(fleet.ErrOutsideRoot))
		Expect(listFiles(outside)).To(BeEmpty())
	})

	It("refuses a root that does not exist, creating nothing", func() {
		missing := filepath.Join(outside, "nope")
		_, err := fleet.Open(missing, fleet.Options{Mode: fleet.ModeTenant})
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(missing).NotTo(BeADirectory())
	})

	It("refuses a control store inside the root", func() {
		_, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Outside: []string{filepath.Join(root, "control.sqlite")}})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		_, err = fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Outside: []string{filepath.Join(outside, "control.sqlite")}, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
	})
})
