package owner

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Open on a refused file system", func() {
	It("fails with ErrUnsafeFileSystem before it takes the lock or opens anything", func() {
		real := probeFileSystem
		probeFileSystem = func(string) (string, bool, error) { return "nfs", true, nil }
		DeferCleanup(func() { probeFileSystem = real })

		path := filepath.Join(GinkgoT().TempDir(), "store", "records.sqlite")
		opened := false
		_, err := Open(context.Background(), Options[*sqlite.Backend]{Path: path,
			Open: func(context.Context, bool, Submitter) (*sqlite.Backend, error) {
				opened = true
				return nil, errors.New("the backend must not be opened")
			}})
		Expect(errors.Is(err, ErrUnsafeFileSystem)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("nfs"))
		Expect(opened).To(BeFalse())
		paths := PathsFor(path)
		for _, p := range []string{paths.State, paths.Socket, path} {
			_, err := os.Lstat(p)
			Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "%s: %v", p, err)
		}
		l := flock.New(paths.Lock)
		got, err := l.TryLock()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeTrue(), "the lock is free")
		Expect(l.Unlock()).To(Succeed())
	})
})
