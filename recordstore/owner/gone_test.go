// A store whose live file was removed or replaced under a process that
// opened it without owning it: the election and the promotion refuse
// before they create anything, and again once the lock is held.

package owner_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// removeStoreFiles removes the live file of the store at path, its
// sidecars, state file and lock file, as deleting the store does.
func removeStoreFiles(path string) {
	GinkgoHelper()
	live, p := sqlite.LivePath(path), owner.PathsFor(path)
	for _, f := range []string{live, live + "-wal", live + "-shm", p.State, p.Lock} {
		Expect(os.Remove(f)).To(Or(Succeed(), MatchError(os.ErrNotExist)))
	}
}

// replaceLive puts another store's live file at the live path of the store
// at path, and returns that file's epoch.
func replaceLive(ctx context.Context, path string) int64 {
	GinkgoHelper()
	other := filepath.Join(GinkgoT().TempDir(), "other.records")
	b, err := sqlite.Open(ctx, other, sqlite.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	epoch := b.Epoch()
	Expect(b.Close()).To(Succeed())
	removeStoreFiles(path)
	Expect(os.Rename(sqlite.LivePath(other), sqlite.LivePath(path))).To(Succeed())
	return epoch
}

// fileEpoch reads the epoch of the live file of the store at path without
// writing it.
func fileEpoch(ctx context.Context, path string) int64 {
	GinkgoHelper()
	b, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true, ReadOnlyFile: true, SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	defer b.Close()
	return b.Epoch()
}

// racedBackend runs race right after the first live-file check passes:
// what it does lands between the check and the lock.
type racedBackend struct {
	*sqlite.Backend
	race   func()
	checks atomic.Int32
}

func (b *racedBackend) CheckLiveFile() error {
	err := b.Backend.CheckLiveFile()
	if b.checks.Add(1) == 1 && err == nil {
		b.race()
	}
	return err
}

// openRaced opens the store at path deferred, over a racedBackend.
func openRaced(ctx context.Context, path string, race func()) (*owner.Store[*racedBackend], *racedBackend) {
	GinkgoHelper()
	var rb *racedBackend
	s, err := owner.Open(ctx, owner.Options[*racedBackend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion, DeferElection: true,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*racedBackend, error) {
			b, err := sqliteOpener(path)(ctx, readOnly, submit)
			if err != nil {
				return nil, err
			}
			rb = &racedBackend{Backend: b, race: race}
			return rb, nil
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s, rb
}

var _ = Describe("A store deleted under a process that does not own it", func() {
	DescribeTable("refuses a deferred store's first write and creates nothing",
		func(ctx SpecContext, replaced bool) {
			path := storePath()
			createStore(ctx, path)
			s := openDeferred(ctx, path, &deferredEvents{})
			DeferCleanup(s.Close)
			var epoch int64
			if replaced {
				epoch = replaceLive(ctx, path)
			} else {
				removeStoreFiles(path)
			}

			_, err := s.Append(ctx, "s", "event", []recordstore.Row{row("second")}, owner.AppendOptions{})
			Expect(err).To(MatchError(recordstore.ErrNotFound))
			Expect(err).To(MatchError(sqlite.ErrLiveFileGone))
			Expect(s.Gone()).To(MatchError(sqlite.ErrLiveFileGone))
			Expect(s.Role()).To(Equal(owner.RoleDeferred))
			expectNoElectionFiles(path)
			_, err = s.Backend().Append(ctx, "s", "event", []recordstore.Row{row("third")})
			Expect(err).To(MatchError(sqlite.ErrLiveFileGone), "the store stays gone, for the backend's writes too")
			if replaced {
				Expect(fileEpoch(ctx, path)).To(Equal(epoch), "the file put there is untouched")
			} else {
				Expect(sqlite.LivePath(path)).NotTo(BeAnExistingFile())
			}
			Expect(s.Close()).To(Succeed())
			expectNoElectionFiles(path)
		},
		Entry("when its live file was removed", false),
		Entry("when another file was put at its live path", true),
	)

	It("refuses once it holds the lock when the store is deleted after the first check, and removes the lock file it made", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		s, rb := openRaced(ctx, path, func() { removeStoreFiles(path) })

		_, err := s.Append(ctx, "s", "event", []recordstore.Row{row("second")}, owner.AppendOptions{})
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(rb.checks.Load()).To(Equal(int32(2)), "checked before the lock and with it held")
		Expect(s.Gone()).To(HaveOccurred())
		expectNoElectionFiles(path)
		Expect(sqlite.LivePath(path)).NotTo(BeAnExistingFile())
	})

	It("refuses to become a non-owner of a store made again, and owned by another process, after the first check", func(ctx SpecContext) {
		path := storePath()
		createStore(ctx, path)
		var epoch int64
		var own interface{ Kill() error }
		s, rb := openRaced(ctx, path, func() {
			epoch = replaceLive(ctx, path)
			own = startOwner(path, fast(), nil)
		})

		_, err := s.Append(ctx, "s", "event", []recordstore.Row{row("second")}, owner.AppendOptions{})
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(rb.checks.Load()).To(Equal(int32(2)), "checked before the lock and once the owner was found ready")
		Expect(s.Gone()).To(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleDeferred), "not a non-owner: no promoter runs")
		Expect(entries(path, spool.StateIncoming)).To(BeEmpty(), "nothing was published to the new store")
		Expect(own.Kill()).To(Succeed())
		Expect(fileEpoch(ctx, path)).To(Equal(epoch+1), "only its owner opened the new file writable")
	})

	It("stops a non-owner's promoter, which makes no lock file, when the store is deleted while its owner runs", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))

		removeStoreFiles(path)
		Expect(own.Kill()).To(Succeed())
		Eventually(s.Gone, wait).Should(MatchError(recordstore.ErrNotFound))
		_, err = s.Append(ctx, "s", "event", []recordstore.Row{row("late")}, owner.AppendOptions{})
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		Expect(owner.PathsFor(path).Lock).NotTo(BeAnExistingFile())
		Expect(sqlite.LivePath(path)).NotTo(BeAnExistingFile())
		Expect(s.Close()).To(Succeed())
		Expect(owner.PathsFor(path).Lock).NotTo(BeAnExistingFile())
	})
})
