// Specs of the fleet's kinds on open: added kinds and columns are declared,
// an incompatible change is refused naming the store.

package fleet_test

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("The fleet's kinds", func() {
	var (
		root string
		ctx  = context.Background()
	)
	BeforeEach(func() {
		root = newRoot()
		f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Provision(ctx, tenant("acme"))).To(Succeed())
		Expect(f.Close()).To(Succeed())
	})

	It("are added to an existing store on open: a new kind and a new column", func() {
		wider := noteKind.Clone()
		wider.Columns = append(wider.Columns, recordstore.Column{Name: "tag", Type: recordstore.TypeString})
		f := openFleet(root, fleet.Options{Kinds: []recordstore.Kind{wider, eventKind}})
		Expect(kindNames(f, tenant("acme"))).To(ConsistOf("notes", "events"))
		Expect(f.Do(ctx, tenant("acme"), func(ctx context.Context, st *fleet.Store) error {
			k, err := st.Backend().Kind(ctx, "notes")
			Expect(k.Columns).To(HaveLen(3))
			return err
		})).To(Succeed())
	})

	It("refuse an incompatible change, naming the store, and leave it as it was", func() {
		changed := noteKind.Clone()
		changed.Key = nil
		f := openFleet(root, fleet.Options{Kinds: []recordstore.Kind{changed}})
		_, err := f.Acquire(ctx, tenant("acme"))
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		p, _ := f.Path(tenant("acme"))
		Expect(err.Error()).To(ContainSubstring(p))
		g := openFleet(root, fleet.Options{})
		Expect(kindNames(g, tenant("acme"))).To(ConsistOf("notes"))
	})
})
