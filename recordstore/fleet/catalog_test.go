// A fleet store whose owner runs a build of another catalog version: a
// child process owns the store claiming the next catalog version, and this
// process, opening it through the fleet's DefaultOpener, comes out
// detached — its reads fail with catalog_version, its writes reach the
// child through the spool — as a store opened by records.Open does.

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// otherCatalogVersion is the catalog version the owner child claims.
const otherCatalogVersion = sqlite.CatalogVersion + 1

// otherCatalogOpener opens a fleet store as a build of otherCatalogVersion
// would own it: owner.Open with that version, so that its state file says
// so, over the SQLite backend with the store's file as live file, electing
// at once.
func otherCatalogOpener(ctx context.Context, path string) (*fleet.Store, error) {
	return owner.Open(ctx, owner.Options[records.Backend]{
		Path:           path,
		CatalogVersion: otherCatalogVersion,
		StartWait:      time.Minute,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (records.Backend, error) {
			b, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, LiveFile: path, SweepInterval: -1})
			if err != nil {
				return nil, err
			}
			return b, nil
		},
	})
}

// runOtherCatalog is the child verb "hold-other-catalog": it creates the
// store of key under root and owns it as otherCatalogOpener does, prints
// "held", and lets it go when stdin closes.
func runOtherCatalog(root, key string) int {
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1,
		CreateOnDemand: fleet.OnDemandCreate, Open: otherCatalogOpener})
	if err == nil {
		defer f.Close()
		var k fleet.Key
		if k, err = f.ParseKey(key); err == nil {
			var l *fleet.Lease
			if l, err = f.Acquire(context.Background(), k); err == nil {
				fmt.Println("held")
				_, _ = os.Stdin.Read(make([]byte, 1))
				l.Release()
			}
		}
	}
	if err != nil {
		fmt.Println(recordstore.Code(err))
		return 1
	}
	fmt.Println("ok")
	return 0
}

var _ = Describe("A fleet store whose owner runs another catalog version", func() {
	It("opens detached: reads fail with catalog_version, writes reach the owner through the spool, and a reopen after the owner left owns it", func(ctx SpecContext) {
		root := newRoot()
		k := tenant("acme")
		stop := startChild("hold-other-catalog", root, k.String(), "held")
		stopped := false
		DeferCleanup(func() {
			if !stopped {
				stop()
			}
		})

		f := openFleet(root, fleet.Options{Open: fleet.DefaultOpener(fleet.StoreOptions{EagerElection: true, StartWait: time.Minute})})
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		st := l.Store()
		Expect(st.Role()).To(Equal(owner.RoleDetached))
		_, err = st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).To(MatchError(owner.ErrCatalogVersion))
		Expect(recordstore.Code(err)).To(Equal("catalog_version"))
		var ce *owner.CatalogVersionError
		Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
		Expect(*ce).To(Equal(owner.CatalogVersionError{Owner: otherCatalogVersion, Build: sqlite.CatalogVersion}))

		res, err := st.Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "n1", "body": "b"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Spooled).To(BeTrue(), "through the owner child's spool")
		Expect(res.Appended).To(BeEquivalentTo(1))
		l.Release()

		stopped = true
		Expect(stop()).To(Equal("ok"))
		Expect(f.CloseStore(ctx, k)).To(Succeed())
		Expect(notes(f, k)).To(Equal([]string{"n1"}), "the owner child applied the detached write; this process owns the store now")
	})
})
