package owner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Open on a refused file system", func() {
	It("fails with ErrUnsafeFileSystem before it takes the lock or opens anything", func() {
		DeferCleanup(owner.StandInFileSystem("nfs", true))

		path := filepath.Join(GinkgoT().TempDir(), "store", "records.sqlite")
		opened := false
		_, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{Path: path,
			Open: func(context.Context, bool, owner.Submitter) (*sqlite.Backend, error) {
				opened = true
				return nil, errors.New("the backend must not be opened")
			}})
		Expect(errors.Is(err, owner.ErrUnsafeFileSystem)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("nfs"))
		Expect(opened).To(BeFalse())
		_, err = os.Lstat(path)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "no live file: %v", err)
		expectNothingLeft(path)
	})
})
