// A failed fsync in a write through an owner.Store, seen by a user through
// the exported recordstore.ErrFsync.

package owner_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/internal/seams"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// fileSyncFails is the real file system whose file fsyncs fail with EIO
// once armed.
type fileSyncFails struct {
	fsutil.OS
	armed atomic.Bool
}

type fileSyncFailsFile struct {
	fsutil.File
	fs *fileSyncFails
}

func (f fileSyncFailsFile) Sync() error {
	if f.fs.armed.Load() {
		return errors.New("input/output error")
	}
	return f.File.Sync()
}

func (s *fileSyncFails) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	f, err := s.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return fileSyncFailsFile{File: f, fs: s}, nil
}

var _ = Describe("a failed fsync in an owner's write", func() {
	It("is returned wrapping recordstore.ErrFsync, and nothing is published", func(ctx SpecContext) {
		path := storePath()
		faults := &fileSyncFails{}
		var sopts spool.Options
		seams.SetSpoolFS(&sopts, &fsutil.Helper{FS: faults})
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
			PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond, Spool: sopts,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Expect(s.Role()).To(Equal(owner.RoleOwner))

		faults.armed.Store(true)
		_, err = s.Publish(ctx, eventBatch("a"))
		Expect(errors.Is(err, recordstore.ErrFsync)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("input/output error")))
		Expect(recordstore.Code(err)).To(Equal(recordstore.CodeInternal))
		Expect(incomingIDs(path)).To(BeEmpty(), "a data file that was not fsynced is never renamed into incoming/")
	})
})
