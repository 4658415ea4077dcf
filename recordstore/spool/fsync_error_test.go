// A failed fsync during a publish, seen by a user through the exported
// recordstore.ErrFsync.

package spool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// syncFails is the real file system whose fsyncs fail with EIO once armed:
// a file's when file is set, otherwise a folder's whose base name is dir.
type syncFails struct {
	fsutil.OS
	armed atomic.Bool
	file  bool
	dir   string
}

type syncFailsFile struct {
	fsutil.File
	fs *syncFails
}

func (f syncFailsFile) Sync() error {
	if f.fs.armed.Load() && f.fs.file {
		return errors.New("input/output error")
	}
	return f.File.Sync()
}

func (s *syncFails) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	f, err := s.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncFailsFile{File: f, fs: s}, nil
}

func (s *syncFails) SyncDir(dir string) error {
	if s.armed.Load() && !s.file && filepath.Base(dir) == s.dir {
		return errors.New("input/output error")
	}
	return s.OS.SyncDir(dir)
}

var _ = Describe("a failed fsync during a publish", func() {
	DescribeTable("is reported wrapping recordstore.ErrFsync, with code internal",
		func(faults *syncFails, wantIncoming int) {
			ctx := context.Background()
			d := newDir(spool.WithFS(spool.Options{}, &fsutil.Helper{FS: faults}))
			faults.armed.Store(true)
			_, err := d.Publish(ctx, sampleBatch(spool.NewIdentity("test-build"), normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(errors.Is(err, recordstore.ErrFsync)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(ContainSubstring("input/output error")))
			Expect(recordstore.Code(err)).To(Equal(recordstore.CodeInternal))
			names, lerr := d.List(ctx, spool.StateIncoming)
			Expect(lerr).NotTo(HaveOccurred())
			Expect(names).To(HaveLen(wantIncoming))
		},
		Entry("a data file's fsync: nothing is published", &syncFails{file: true}, 0),
		Entry("incoming/'s fsync after the rename: the batch is there, maybe not durably", &syncFails{dir: "incoming"}, 1),
	)
})
