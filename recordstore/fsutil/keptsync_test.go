package fsutil_test

import (
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// countFS counts the files opened, and fails fsyncs while failSync is set.
// With dataSync set, the files it opens can also data-sync (DataSyncer):
// it counts those calls and the fsyncs, and fails both while failSync is set.
type countFS struct {
	fsutil.OS
	opens     int
	failSync  error
	dataSync  bool
	syncs     int
	dataSyncs int
}

// statFile is a File that can also report its metadata, as KeptSync
// needs, and fail its fsync on demand.
type statFile struct {
	fsutil.File
	fs *countFS
}

func (f statFile) Stat() (os.FileInfo, error) {
	return f.File.(interface{ Stat() (os.FileInfo, error) }).Stat()
}

func (f statFile) Sync() error {
	f.fs.syncs++
	if f.fs.failSync != nil {
		return f.fs.failSync
	}
	return f.File.Sync()
}

// dataFile is a statFile that can data-sync through the real file's
// DataSync.
type dataFile struct{ statFile }

func (f dataFile) DataSync() error {
	f.fs.dataSyncs++
	if f.fs.failSync != nil {
		return f.fs.failSync
	}
	return f.File.(fsutil.DataSyncer).DataSync()
}

func (c *countFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	f, err := c.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	c.opens++
	if c.dataSync {
		return dataFile{statFile{f, c}}, nil
	}
	return statFile{f, c}, nil
}

var _ = Describe("KeptSync", func() {
	var (
		path string
		fs   *countFS
		k    *fsutil.KeptSync
	)
	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "records.sqlite-wal")
		Expect(os.WriteFile(path, []byte("frames"), 0o600)).To(Succeed())
		fs = &countFS{}
		k = (&fsutil.Helper{FS: fs}).KeepSync(path)
		DeferCleanup(k.Close)
	})

	It("opens the file once and fsyncs it through the same descriptor", func() {
		for range 3 {
			Expect(k.Sync()).To(Succeed())
		}
		Expect(fs.opens).To(Equal(1))
		Expect(k.Path()).To(Equal(path))
		Expect(os.ReadFile(path)).To(Equal([]byte("frames")))
	})

	It("opens the path again once its file was removed and made again, or replaced by a rename", func() {
		Expect(k.Sync()).To(Succeed())
		Expect(os.Remove(path)).To(Succeed())
		err := k.Sync()
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "the removed file is not fsynced in its place: %v", err)
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeFalse())

		Expect(os.WriteFile(path, []byte("new"), 0o600)).To(Succeed())
		Expect(k.Sync()).To(Succeed())
		Expect(fs.opens).To(Equal(2))

		other := path + ".next"
		Expect(os.WriteFile(other, []byte("renamed"), 0o600)).To(Succeed())
		Expect(os.Rename(other, path)).To(Succeed())
		Expect(k.Sync()).To(Succeed())
		Expect(fs.opens).To(Equal(3), "the renamed-over file had no link left")
	})

	It("wraps a failed fsync in ErrSync and opens the path again after it", func() {
		Expect(k.Sync()).To(Succeed())
		fs.failSync = errors.New("EIO")
		err := k.Sync()
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("EIO")))
		fs.failSync = nil
		Expect(k.Sync()).To(Succeed())
		Expect(fs.opens).To(Equal(2))
	})

	It("syncs after Close by opening the path again", func() {
		Expect(k.Sync()).To(Succeed())
		Expect(k.Close()).To(Succeed())
		Expect(k.Sync()).To(Succeed())
		Expect(fs.opens).To(Equal(2))
	})
})

var _ = Describe("KeepDataSync", func() {
	var (
		path string
		fs   *countFS
		k    *fsutil.KeptSync
	)
	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "records.sqlite-wal")
		Expect(os.WriteFile(path, []byte("frames"), 0o600)).To(Succeed())
		fs = &countFS{dataSync: true}
		k = (&fsutil.Helper{FS: fs}).KeepDataSync(path)
		DeferCleanup(k.Close)
	})

	It("data-syncs through the kept descriptor, never a full fsync", func() {
		for range 3 {
			Expect(k.Sync()).To(Succeed())
		}
		Expect(fs.dataSyncs).To(Equal(3))
		Expect(fs.syncs).To(BeZero())
		Expect(fs.opens).To(Equal(1))
	})

	It("fsyncs a File that cannot data-sync", func() {
		fs.dataSync = false
		Expect(k.Sync()).To(Succeed())
		Expect(fs.syncs).To(Equal(1))
		Expect(fs.dataSyncs).To(BeZero())
	})

	It("reports a failed data sync as a failed fsync and opens the path again after it", func() {
		Expect(k.Sync()).To(Succeed())
		fs.failSync = errors.New("EIO")
		err := k.Sync()
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("EIO")))
		fs.failSync = nil
		Expect(k.Sync()).To(Succeed())
		Expect(fs.opens).To(Equal(2))
		Expect(fs.syncs).To(BeZero())
	})

	It("data-syncs a real file that grew, and keeps what was written", func() {
		k := fsutil.Default.KeepDataSync(path)
		DeferCleanup(k.Close)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Close)
		for range 3 {
			_, err := f.Write([]byte("+more"))
			Expect(err).NotTo(HaveOccurred())
			Expect(k.Sync()).To(Succeed())
		}
		Expect(os.ReadFile(path)).To(Equal([]byte("frames+more+more+more")))
		Expect(os.Remove(path)).To(Succeed())
		Expect(errors.Is(k.Sync(), os.ErrNotExist)).To(BeTrue())
	})
})
