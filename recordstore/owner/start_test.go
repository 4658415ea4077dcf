// Specs for an owner whose start-up fails after it took the lock: it
// leaves no state file and no socket behind, closes what it opened, and
// frees the lock for the next process.

package owner_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// closeSeen is the SQLite backend, noting that it was closed.
type closeSeen struct {
	*sqlite.Backend
	closed bool
}

func (c *closeSeen) Close() error {
	c.closed = true
	return c.Backend.Close()
}

// expectNothingLeft checks that the store at path has no state file and
// no socket, and that its lock is free.
func expectNothingLeft(path string) {
	GinkgoHelper()
	paths := owner.PathsFor(path)
	for _, p := range []string{paths.State, paths.Socket} {
		_, err := os.Lstat(p)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "%s: %v", p, err)
	}
	Expect(lockFree(paths.Lock)).To(BeTrue(), "the lock is free")
}

var _ = Describe("an owner whose start-up fails", func() {
	It("returns the backend's open error and leaves the store to the next process", func() {
		path := storePath()
		refused := errors.New("disk on fire")
		_, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, StartWait: wait,
			Open: func(context.Context, bool, owner.Submitter) (*sqlite.Backend, error) { return nil, refused },
		})
		Expect(err).To(MatchError(refused))
		expectNothingLeft(path)

		s := openHere(path)
		Expect(s.Role()).To(Equal(owner.RoleOwner), "the next process owns the store")
	})

	It("closes the backend when it cannot serve the socket, and leaves the store to the next process", func() {
		path := storePath()
		// Another program listens where the socket goes (the lock's
		// holder never does): the owner must not take its place.
		paths := owner.PathsFor(path)
		Expect(os.MkdirAll(filepath.Dir(paths.Socket), 0o700)).To(Succeed())
		ln, err := net.Listen("unix", paths.Socket)
		Expect(err).NotTo(HaveOccurred())
		b := &closeSeen{}
		_, err = owner.Open(context.Background(), owner.Options[*closeSeen]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, StartWait: wait,
			PollMin: time.Hour, PollMax: time.Hour,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*closeSeen, error) {
				sb, err := sqliteOpener(path)(ctx, readOnly, submit)
				b.Backend = sb
				return b, err
			},
		})
		Expect(err).To(MatchError(ContainSubstring("served by a live process")))
		Expect(b.Backend).NotTo(BeNil(), "the backend was opened")
		Expect(b.closed).To(BeTrue(), "and closed again")
		_, err = os.Lstat(paths.State)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "no state file: %v", err)
		Expect(ln.Close()).To(Succeed())
		expectNothingLeft(path)

		s := openHere(path)
		Expect(s.Role()).To(Equal(owner.RoleOwner), "the next process owns the store")
	})
})
