package fsutil_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

func TestFsutil(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fsutil")
}

// faultFS fails the named operation (once its countdown reaches zero).
type faultFS struct {
	fsutil.OS
	failOp string
	err    error
}

type faultFile struct {
	fsutil.File
	fs *faultFS
}

func (f faultFile) Sync() error {
	if f.fs.failOp == "sync" {
		return f.fs.err
	}
	return f.File.Sync()
}

func (f faultFile) Write(p []byte) (int, error) {
	if f.fs.failOp == "write" {
		return 0, f.fs.err
	}
	return f.File.Write(p)
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	file, err := f.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultFile{file, f}, nil
}

func (f *faultFS) Rename(a, b string) error {
	if f.failOp == "rename" {
		return f.err
	}
	return f.OS.Rename(a, b)
}

func (f *faultFS) SyncDir(dir string) error {
	if f.failOp == "syncdir" {
		return f.err
	}
	return f.OS.SyncDir(dir)
}

func entries(dir string) []string {
	des, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

var _ = Describe("WriteFile", func() {
	var dir, path string
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		path = filepath.Join(dir, "state.json")
	})

	It("replaces the content with mode 0600 and leaves no temp file", func() {
		Expect(fsutil.WriteFile(path, []byte("one"), fsutil.FileMode)).To(Succeed())
		Expect(fsutil.WriteFile(path, []byte("two"), fsutil.FileMode)).To(Succeed())
		Expect(os.ReadFile(path)).To(Equal([]byte("two")))
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		Expect(entries(dir)).To(Equal([]string{"state.json"}))
	})

	DescribeTable("keeps the old content when a step fails",
		func(op string, wantSync bool) {
			Expect(fsutil.WriteFile(path, []byte("old"), fsutil.FileMode)).To(Succeed())
			boom := errors.New("boom")
			h := &fsutil.Helper{FS: &faultFS{failOp: op, err: boom}}
			err := h.WriteFile(path, []byte("new"), fsutil.FileMode)
			Expect(err).To(MatchError(boom))
			Expect(errors.Is(err, fsutil.ErrSync)).To(Equal(wantSync))
			if op != "syncdir" {
				Expect(os.ReadFile(path)).To(Equal([]byte("old")))
				Expect(entries(dir)).To(Equal([]string{"state.json"}), "the temp file is removed")
			}
		},
		Entry("write", "write", false),
		Entry("file fsync (fatal)", "sync", true),
		Entry("rename", "rename", false),
		Entry("folder fsync (fatal)", "syncdir", true),
	)
})

var _ = Describe("CreateFile", func() {
	It("refuses to overwrite and removes a partial file on failure", func() {
		dir := GinkgoT().TempDir()
		p := filepath.Join(dir, "data")
		fill := func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }
		Expect(fsutil.Default.CreateFile(p, fsutil.FileMode, fill)).To(Succeed())
		Expect(fsutil.Default.CreateFile(p, fsutil.FileMode, fill)).To(MatchError(os.ErrExist))
		h := &fsutil.Helper{FS: &faultFS{failOp: "sync", err: errors.New("eio")}}
		q := filepath.Join(dir, "other")
		Expect(h.CreateFile(q, fsutil.FileMode, fill)).To(MatchError(fsutil.ErrSync))
		Expect(q).NotTo(BeAnExistingFile())
	})
})

var _ = Describe("MkdirAll and Rename", func() {
	It("creates nested folders 0700 and moves a folder durably", func() {
		root := GinkgoT().TempDir()
		a := filepath.Join(root, "x", "tmp", "b1")
		Expect(fsutil.MkdirAll(a)).To(Succeed())
		for _, d := range []string{filepath.Join(root, "x"), filepath.Join(root, "x", "tmp"), a} {
			fi, err := os.Stat(d)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)), d)
		}
		Expect(fsutil.MkdirAll(a)).To(Succeed(), "existing folders are fine")
		in := filepath.Join(root, "x", "incoming")
		Expect(fsutil.MkdirAll(in)).To(Succeed())
		Expect(fsutil.Rename(a, filepath.Join(in, "b1"))).To(Succeed())
		Expect(filepath.Join(in, "b1")).To(BeADirectory())
		Expect(a).NotTo(BeADirectory())
	})

	It("refuses a path whose component is a file", func() {
		root := GinkgoT().TempDir()
		f := filepath.Join(root, "f")
		Expect(os.WriteFile(f, nil, 0o600)).To(Succeed())
		Expect(fsutil.MkdirAll(filepath.Join(f, "sub"))).NotTo(Succeed())
	})
})

var _ = Describe("CreateFiles", func() {
	files := func(dir string) []fsutil.NamedData {
		return []fsutil.NamedData{{Path: filepath.Join(dir, "a"), Data: []byte("one")}, {Path: filepath.Join(dir, "b"), Data: []byte("two")}}
	}

	It("writes every file with mode 0600", func() {
		dir := GinkgoT().TempDir()
		Expect(fsutil.Default.CreateFiles(dir, files(dir), fsutil.FileMode)).To(Succeed())
		Expect(os.ReadFile(filepath.Join(dir, "a"))).To(Equal([]byte("one")))
		Expect(os.ReadFile(filepath.Join(dir, "b"))).To(Equal([]byte("two")))
		fi, err := os.Stat(filepath.Join(dir, "b"))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	DescribeTable("removes every file it created when a step fails",
		func(op string, wantSync bool) {
			dir := GinkgoT().TempDir()
			h := &fsutil.Helper{FS: &faultFS{failOp: op, err: errors.New("eio")}}
			err := h.CreateFiles(dir, files(dir), fsutil.FileMode)
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, fsutil.ErrSync)).To(Equal(wantSync))
			Expect(entries(dir)).To(BeEmpty())
		},
		Entry("a write", "write", false),
		Entry("a file fsync (fatal)", "sync", true),
		Entry("the folder fsync (fatal)", "syncdir", true),
	)

	It("refuses a file that exists and leaves it alone", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "b"), []byte("old"), 0o600)).To(Succeed())
		Expect(fsutil.Default.CreateFiles(dir, files(dir), fsutil.FileMode)).To(MatchError(os.ErrExist))
		Expect(entries(dir)).To(Equal([]string{"b"}))
		Expect(os.ReadFile(filepath.Join(dir, "b"))).To(Equal([]byte("old")))
	})
})

var _ = Describe("SyncFile", func() {
	It("fsyncs a file written by someone else and leaves its content alone", func() {
		path := filepath.Join(GinkgoT().TempDir(), "records.sqlite-wal")
		Expect(os.WriteFile(path, []byte("frames"), 0o600)).To(Succeed())
		Expect(fsutil.SyncFile(path)).To(Succeed())
		Expect(os.ReadFile(path)).To(Equal([]byte("frames")))
	})

	It("returns a missing file's error as it is, not as a sync failure", func() {
		err := fsutil.SyncFile(filepath.Join(GinkgoT().TempDir(), "absent"))
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeFalse())
	})

	It("wraps a failed fsync in ErrSync", func() {
		path := filepath.Join(GinkgoT().TempDir(), "f")
		Expect(os.WriteFile(path, []byte("x"), 0o600)).To(Succeed())
		h := &fsutil.Helper{FS: &faultFS{failOp: "sync", err: errors.New("EIO")}}
		err := h.SyncFile(path)
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("EIO")))
	})
})

var _ = Describe("RenameNotify", func() {
	It("calls visible once the new name exists, and returns after it", func() {
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "tmp", "b"), 0o700)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(dir, "incoming"), 0o700)).To(Succeed())
		var sawNew, sawOld bool
		var calls atomic.Int32
		err := fsutil.Default.RenameNotify(filepath.Join(dir, "tmp", "b"), filepath.Join(dir, "incoming", "b"), func() {
			calls.Add(1)
			_, err := os.Stat(filepath.Join(dir, "incoming", "b"))
			sawNew = err == nil
			_, err = os.Stat(filepath.Join(dir, "tmp", "b"))
			sawOld = err == nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(calls.Load()).To(BeEquivalentTo(1), "visible ran before RenameNotify returned")
		Expect(sawNew).To(BeTrue())
		Expect(sawOld).To(BeFalse())
	})

	It("does not call visible when the rename fails", func() {
		dir := GinkgoT().TempDir()
		called := false
		err := fsutil.Default.RenameNotify(filepath.Join(dir, "absent"), filepath.Join(dir, "x"), func() { called = true })
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "%v", err)
		Expect(called).To(BeFalse())
	})
})

var _ = Describe("CreateFiles with prepared files", func() {
	It("truncates and writes a prepared file, and creates the others", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "a"), nil, 0o600)).To(Succeed())
		Expect(fsutil.Default.CreateFiles(dir, []fsutil.NamedData{
			{Path: filepath.Join(dir, "a"), Data: []byte("one"), Prepared: true},
			{Path: filepath.Join(dir, "b"), Data: []byte("two")},
		}, fsutil.FileMode)).To(Succeed())
		Expect(os.ReadFile(filepath.Join(dir, "a"))).To(Equal([]byte("one")))
		Expect(os.ReadFile(filepath.Join(dir, "b"))).To(Equal([]byte("two")))
	})

	It("refuses a prepared file that is not there, creating nothing", func() {
		dir := GinkgoT().TempDir()
		err := fsutil.Default.CreateFiles(dir, []fsutil.NamedData{
			{Path: filepath.Join(dir, "b"), Data: []byte("two")},
			{Path: filepath.Join(dir, "a"), Data: []byte("one"), Prepared: true},
		}, fsutil.FileMode)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "%v", err)
		Expect(entries(dir)).To(BeEmpty())
	})
})

// syncLog is an FS that records, in order, every folder it fsyncs.
type syncLog struct {
	fsutil.OS
	mu   sync.Mutex
	dirs []string
}

func (s *syncLog) SyncDir(dir string) error {
	s.mu.Lock()
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
	return s.OS.SyncDir(dir)
}

// gateFS holds a folder fsync until release is closed (or a minute has
// passed, so that a wrong order fails instead of hanging), and records
// whether it was released and whether it completed.
type gateFS struct {
	fsutil.OS
	release    chan struct{}
	overlapped atomic.Bool
	synced     atomic.Bool
}

func (g *gateFS) SyncDir(dir string) error {
	select {
	case <-g.release:
		g.overlapped.Store(true)
	case <-time.After(time.Minute):
	}
	err := g.OS.SyncDir(dir)
	g.synced.Store(true)
	return err
}

var _ = Describe("which folders a move fsyncs", func() {
	var root string
	BeforeEach(func() {
		root = GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(root, "tmp", "b"), 0o700)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(root, "incoming"), 0o700)).To(Succeed())
	})

	It("Rename fsyncs both folders, so the old name's removal is durable too", func() {
		log := &syncLog{}
		h := &fsutil.Helper{FS: log}
		Expect(h.Rename(filepath.Join(root, "tmp", "b"), filepath.Join(root, "incoming", "b"))).To(Succeed())
		Expect(log.dirs).To(ConsistOf(filepath.Join(root, "tmp"), filepath.Join(root, "incoming")))
	})

	It("RenameNotify, the commit of a scratch folder, fsyncs the destination only", func() {
		log := &syncLog{}
		h := &fsutil.Helper{FS: log}
		Expect(h.RenameNotify(filepath.Join(root, "tmp", "b"), filepath.Join(root, "incoming", "b"), nil)).To(Succeed())
		Expect(log.dirs).To(Equal([]string{filepath.Join(root, "incoming")}))
		Expect(filepath.Join(root, "incoming", "b")).To(BeADirectory())
	})

	It("RenameNotify runs visible while the fsync is under way, and returns after both", func() {
		gate := &gateFS{release: make(chan struct{})}
		h := &fsutil.Helper{FS: gate}
		calls := 0
		Expect(h.RenameNotify(filepath.Join(root, "tmp", "b"), filepath.Join(root, "incoming", "b"), func() {
			calls++
			close(gate.release)
		})).To(Succeed())
		Expect(calls).To(Equal(1))
		Expect(gate.overlapped.Load()).To(BeTrue(), "the fsync finished only after visible ran")
		Expect(gate.synced.Load()).To(BeTrue(), "RenameNotify returned before the fsync")
	})

	It("RenameNotify reports a failed destination fsync as ErrSync, after the move", func() {
		h := &fsutil.Helper{FS: &faultFS{failOp: "syncdir", err: errors.New("EIO")}}
		err := h.RenameNotify(filepath.Join(root, "tmp", "b"), filepath.Join(root, "incoming", "b"), nil)
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeTrue(), "%v", err)
		Expect(filepath.Join(root, "incoming", "b")).To(BeADirectory())
	})
})

var _ = Describe("RewriteFiles", func() {
	It("rewrites prepared files and fsyncs them, not their folder", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "a"), []byte("stale content"), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "b"), nil, 0o600)).To(Succeed())
		log := &syncLog{}
		h := &fsutil.Helper{FS: log}
		Expect(h.RewriteFiles([]fsutil.NamedData{
			{Path: filepath.Join(dir, "a"), Data: []byte("one"), Prepared: true},
			{Path: filepath.Join(dir, "b"), Data: []byte("two"), Prepared: true},
		}, fsutil.FileMode)).To(Succeed())
		Expect(os.ReadFile(filepath.Join(dir, "a"))).To(Equal([]byte("one")), "truncated, then written")
		Expect(os.ReadFile(filepath.Join(dir, "b"))).To(Equal([]byte("two")))
		Expect(log.dirs).To(BeEmpty())
	})

	It("refuses a file that is not prepared, touching nothing", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "a"), nil, 0o600)).To(Succeed())
		err := fsutil.Default.RewriteFiles([]fsutil.NamedData{
			{Path: filepath.Join(dir, "a"), Data: []byte("one"), Prepared: true},
			{Path: filepath.Join(dir, "b"), Data: []byte("two")},
		}, fsutil.FileMode)
		Expect(err).To(MatchError(ContainSubstring("not a prepared file")))
		Expect(entries(dir)).To(Equal([]string{"a"}))
		Expect(os.ReadFile(filepath.Join(dir, "a"))).To(BeEmpty())
	})

	It("wraps a failed file fsync in ErrSync and removes the files", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "a"), nil, 0o600)).To(Succeed())
		h := &fsutil.Helper{FS: &faultFS{failOp: "sync", err: errors.New("EIO")}}
		err := h.RewriteFiles([]fsutil.NamedData{{Path: filepath.Join(dir, "a"), Data: []byte("one"), Prepared: true}}, fsutil.FileMode)
		Expect(errors.Is(err, fsutil.ErrSync)).To(BeTrue(), "%v", err)
		Expect(entries(dir)).To(BeEmpty())
	})
})

var _ = Describe("CreateFiles with Fill", func() {
	It("fills the files in order, each after the ones before it are written", func() {
		dir := GinkgoT().TempDir()
		var order []string
		err := fsutil.Default.CreateFiles(dir, []fsutil.NamedData{
			{Path: filepath.Join(dir, "data"), Fill: func(w io.Writer) error {
				order = append(order, "data")
				_, err := w.Write([]byte("rows"))
				return err
			}},
			{Path: filepath.Join(dir, "manifest"), Fill: func(w io.Writer) error {
				data, err := os.ReadFile(filepath.Join(dir, "data"))
				order = append(order, "manifest saw "+string(data))
				if err != nil {
					return err
				}
				_, err = w.Write([]byte("4 bytes"))
				return err
			}},
		}, fsutil.FileMode)
		Expect(err).NotTo(HaveOccurred())
		Expect(order).To(Equal([]string{"data", "manifest saw rows"}))
		Expect(os.ReadFile(filepath.Join(dir, "manifest"))).To(Equal([]byte("4 bytes")))
	})

	It("returns a Fill error as it is and removes every file", func() {
		dir := GinkgoT().TempDir()
		bad := errors.New("row 7 is bad")
		err := fsutil.Default.CreateFiles(dir, []fsutil.NamedData{
			{Path: filepath.Join(dir, "a"), Data: []byte("one")},
			{Path: filepath.Join(dir, "b"), Fill: func(w io.Writer) error {
				_, _ = w.Write([]byte("partial"))
				return bad
			}},
		}, fsutil.FileMode)
		Expect(err).To(BeIdenticalTo(bad))
		Expect(entries(dir)).To(BeEmpty())
	})
})

// writebackFS records the StartWriteback calls of its files: the range
// asked for and how many bytes the file held then.
type writebackFS struct {
	fsutil.OS
	calls map[string][][3]int64 // file name: {off, n, written}
}

type writebackFile struct {
	fsutil.File
	fs      *writebackFS
	written int64
}

func (f *writebackFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

func (f *writebackFile) StartWriteback(off, n int64) {
	name := filepath.Base(f.Name())
	f.fs.calls[name] = append(f.fs.calls[name], [3]int64{off, n, f.written})
	f.File.(fsutil.WritebackStarter).StartWriteback(off, n)
}

func (f *writebackFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	file, err := f.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &writebackFile{File: file, fs: f}, nil
}

var _ = Describe("writeback during Fill", func() {
	It("is started on the real file system's files", func() {
		f, err := fsutil.OS{}.OpenFile(filepath.Join(GinkgoT().TempDir(), "f"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		_, ok := f.(fsutil.WritebackStarter)
		Expect(ok).To(BeTrue())
	})

	It("is not started for a file synced alone, below 256 KiB", func() {
		dir := GinkgoT().TempDir()
		wfs := &writebackFS{calls: map[string][][3]int64{}}
		h := &fsutil.Helper{FS: wfs}
		Expect(h.CreateFiles(dir, []fsutil.NamedData{{Path: filepath.Join(dir, "alone"), Data: []byte("one file")}}, fsutil.FileMode)).To(Succeed())
		Expect(wfs.calls).To(BeEmpty())
		Expect(os.ReadFile(filepath.Join(dir, "alone"))).To(Equal([]byte("one file")))
	})

	It("starts every 256 KiB on what is written already, and on the rest of every file before files are synced together, and leaves the content alone", func() {
		dir := GinkgoT().TempDir()
		wfs := &writebackFS{calls: map[string][][3]int64{}}
		h := &fsutil.Helper{FS: wfs}
		big := bytes.Repeat([]byte("0123456789abcdef"), (900<<10)/16)
		err := h.CreateFiles(dir, []fsutil.NamedData{
			{Path: filepath.Join(dir, "big"), Fill: func(w io.Writer) error {
				for off := 0; off < 600<<10; off += 10 << 10 {
					if _, err := w.Write(big[off : off+10<<10]); err != nil {
						return err
					}
				}
				_, err := w.Write(big[600<<10:])
				return err
			}},
			{Path: filepath.Join(dir, "small"), Fill: func(w io.Writer) error {
				_, err := w.Write(big[:200<<10])
				return err
			}},
			{Path: filepath.Join(dir, "data"), Data: big},
		}, fsutil.FileMode)
		Expect(err).NotTo(HaveOccurred())
		Expect(wfs.calls["big"]).To(Equal([][3]int64{
			{0, 260 << 10, 260 << 10},         // the first write to reach 256 KiB
			{260 << 10, 260 << 10, 520 << 10}, // the next 256 KiB on
			{520 << 10, 380 << 10, 900 << 10}, // the last, large write
		}))
		// Before the files are synced together, the rest of each.
		Expect(wfs.calls["small"]).To(Equal([][3]int64{{0, 200 << 10, 200 << 10}}), "a Fill of less than 256 KiB: once, all of it")
		Expect(wfs.calls["data"]).To(Equal([][3]int64{{0, 900 << 10, 900 << 10}}), "Data: once, all of it")
		Expect(os.ReadFile(filepath.Join(dir, "big"))).To(Equal(big))
		Expect(os.ReadFile(filepath.Join(dir, "small"))).To(Equal(big[:200<<10]))
	})
})
