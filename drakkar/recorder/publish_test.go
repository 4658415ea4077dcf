// Specs of Publish: same-FS and real cross-filesystem moves, injected
// EXDEV and faults at each step, an occupied destination, modes.

package recorder_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// faultFS is the real file system with a hook that can fail any call
// before it happens.
type faultFS struct {
	fsutil.OS
	fail func(op, path string) error
}

func (f faultFS) hook(op, path string) error {
	if f.fail == nil {
		return nil
	}
	return f.fail(op, path)
}

func (f faultFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	if err := f.hook("open", name); err != nil {
		return nil, err
	}
	return f.OS.OpenFile(name, flag, perm)
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if err := f.hook("rename", oldpath); err != nil {
		return err
	}
	return f.OS.Rename(oldpath, newpath)
}

func (f faultFS) Remove(name string) error {
	if err := f.hook("remove", name); err != nil {
		return err
	}
	return f.OS.Remove(name)
}

func (f faultFS) SyncDir(dir string) error {
	if err := f.hook("syncdir", dir); err != nil {
		return err
	}
	return f.OS.SyncDir(dir)
}

var errInjected = errors.New("injected failure")

func exdevOn(src string) func(op, path string) error {
	return func(op, path string) error {
		if op == "rename" && path == src {
			return &os.LinkError{Op: "rename", Old: src, New: "dest", Err: syscall.EXDEV}
		}
		return nil
	}
}

func testMeta() dbfiles.Meta {
	return dbfiles.Meta{
		Worker: "w", Instance: "0123456789abcdef", Cluster: "search hot",
		SealedAt: time.Date(2026, 10, 13, 9, 0, 2, 410_000_000, time.UTC), SizeBytes: 11,
		Tables: map[string]int64{"events": 0},
	}
}

// sealedFile writes a stand-in sealed file into dir.
func sealedFile(dir, content string) string {
	src := filepath.Join(dir, "w-2026-10-13__08_00_00.db")
	Expect(os.WriteFile(src, []byte(content), 0o600)).To(Succeed())
	return src
}

func mode(path string) os.FileMode {
	fi, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	return fi.Mode().Perm()
}

func names(dir string) []string {
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// expectPublished checks the history folder holds the database with
// content, its canonical meta file, modes 0600, and nothing else.
func expectPublished(src, history, content string) {
	name := filepath.Base(src)
	b, err := os.ReadFile(filepath.Join(history, name))
	Expect(err).NotTo(HaveOccurred())
	Expect(string(b)).To(Equal(content))
	want, err := dbfiles.EncodeMeta(testMeta())
	Expect(err).NotTo(HaveOccurred())
	Expect(os.ReadFile(filepath.Join(history, name+".meta.json"))).To(Equal(want))
	Expect(mode(filepath.Join(history, name))).To(Equal(os.FileMode(0o600)))
	Expect(mode(filepath.Join(history, name+".meta.json"))).To(Equal(os.FileMode(0o600)))
	Expect(names(history)).To(ConsistOf(name, name+".meta.json"))
	Expect(src).NotTo(BeAnExistingFile())
}

var _ = Describe("Publishing a sealed file", func() {
	var storage, shared, history string
	ctx := context.Background()

	BeforeEach(func() {
		storage, shared = GinkgoT().TempDir(), GinkgoT().TempDir()
		history = dbfiles.HistoryDir(shared, "search hot")
	})

	It("renames it into a new history folder on one file system, meta file first", func() {
		src := sealedFile(storage, "sealed data")
		var order []string
		m := &recorder.Mover{FS: faultFS{fail: func(op, path string) error {
			if op == "rename" {
				order = append(order, filepath.Base(path))
			}
			return nil
		}}}
		pub, err := m.Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		Expect(pub).To(Equal(recorder.Published{Dest: filepath.Join(history, filepath.Base(src)), SizeBytes: 11}))
		expectPublished(src, history, "sealed data")
		Expect(mode(history)).To(Equal(os.FileMode(0o700)))
		Expect(mode(filepath.Dir(history))).To(Equal(os.FileMode(0o700)))
		Expect(order).To(HaveLen(2))
		Expect(order[0]).To(HavePrefix("." + filepath.Base(src) + ".meta.json.tmp"))
		Expect(order[1]).To(Equal(filepath.Base(src)))
	})

	It("copies it across a real file-system boundary (/dev/shm)", func() {
		shm, err := os.MkdirTemp("/dev/shm", "publish-")
		if err != nil {
			Skip("no /dev/shm: " + err.Error())
		}
		DeferCleanup(os.RemoveAll, shm)
		var a, b syscall.Stat_t
		Expect(syscall.Stat(shm, &a)).To(Succeed())
		Expect(syscall.Stat(shared, &b)).To(Succeed())
		if a.Dev == b.Dev {
			Skip("/dev/shm and the temp folder are on one file system")
		}
		src := sealedFile(shm, "sealed data")
		pub, err := (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		Expect(pub.CrossedFS).To(BeTrue())
		expectPublished(src, history, "sealed data")
	})

	It("copies through a dot-prefixed .incoming file when the rename fails with EXDEV", func() {
		src := sealedFile(storage, "sealed data")
		var created []string
		m := &recorder.Mover{NewHex: func() string { return "00112233445566ff" }, FS: faultFS{fail: func(op, path string) error {
			if op == "open" && strings.HasSuffix(path, ".incoming") {
				created = append(created, filepath.Base(path))
			}
			return exdevOn(src)(op, path)
		}}}
		pub, err := m.Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		Expect(pub.CrossedFS).To(BeTrue())
		Expect(created).To(Equal([]string{".w-2026-10-13__08_00_00.db.00112233445566ff.incoming"}))
		expectPublished(src, history, "sealed data")
	})

	DescribeTable("leaves the source in place when a cross-filesystem step fails, and a second publish succeeds",
		func(failOp, pathPart string) {
			src := sealedFile(storage, "sealed data")
			failing := &recorder.Mover{FS: faultFS{fail: func(op, path string) error {
				if op == failOp && strings.Contains(filepath.Base(path), pathPart) {
					return errInjected
				}
				return exdevOn(src)(op, path)
			}}}
			_, err := failing.Publish(ctx, src, history, testMeta())
			Expect(err).To(MatchError(errInjected))
			Expect(src).To(BeAnExistingFile())
			for _, n := range names(history) {
				Expect(n).NotTo(HaveSuffix(".incoming"))
			}
			_, err = (&recorder.Mover{FS: faultFS{fail: exdevOn(src)}}).Publish(ctx, src, history, testMeta())
			Expect(err).NotTo(HaveOccurred())
			expectPublished(src, history, "sealed data")
		},
		Entry("reading the source", "open", "w-2026-10-13__08_00_00.db"),
		Entry("creating the copy", "open", ".incoming"),
		Entry("renaming the copy", "rename", ".incoming"),
	)

	It("finishes on the next publish when removing the source after a copy failed", func() {
		src := sealedFile(storage, "sealed data")
		m := &recorder.Mover{FS: faultFS{fail: func(op, path string) error {
			if op == "remove" && path == src {
				return errInjected
			}
			return exdevOn(src)(op, path)
		}}}
		_, err := m.Publish(ctx, src, history, testMeta())
		Expect(err).To(MatchError(errInjected))
		Expect(src).To(BeAnExistingFile())
		Expect(filepath.Join(history, filepath.Base(src))).To(BeAnExistingFile())
		pub, err := (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		Expect(pub.CrossedFS).To(BeFalse())
		expectPublished(src, history, "sealed data")
	})

	It("leaves a meta file without its database when the rename fails, and a second publish succeeds", func() {
		src := sealedFile(storage, "sealed data")
		m := &recorder.Mover{FS: faultFS{fail: func(op, path string) error {
			if op == "rename" && path == src {
				return syscall.EIO
			}
			return nil
		}}}
		_, err := m.Publish(ctx, src, history, testMeta())
		Expect(err).To(MatchError(syscall.EIO))
		Expect(names(history)).To(ConsistOf(filepath.Base(src) + ".meta.json"))
		Expect(src).To(BeAnExistingFile())
		_, err = (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		expectPublished(src, history, "sealed data")
	})

	It("refuses to overwrite another file of the same name", func() {
		src := sealedFile(storage, "sealed data")
		Expect(fsutil.MkdirAll(history)).To(Succeed())
		dest := filepath.Join(history, filepath.Base(src))
		Expect(os.WriteFile(dest, []byte("other data!"), 0o600)).To(Succeed())
		_, err := (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).To(MatchError(recorder.ErrDestinationExists))
		Expect(os.ReadFile(dest)).To(Equal([]byte("other data!")))
		Expect(src).To(BeAnExistingFile())
		Expect(names(history)).To(ConsistOf(filepath.Base(src)))
	})

	It("only removes the source when the same bytes are already published", func() {
		src := sealedFile(storage, "sealed data")
		Expect(fsutil.MkdirAll(history)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(history, filepath.Base(src)), []byte("sealed data"), 0o600)).To(Succeed())
		_, err := (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		expectPublished(src, history, "sealed data")
	})

	It("changes nothing for a bad meta", func() {
		src := sealedFile(storage, "sealed data")
		meta := testMeta()
		meta.Instance = "not hex"
		_, err := (&recorder.Mover{}).Publish(ctx, src, history, meta)
		Expect(err).To(MatchError(dbfiles.ErrBadMeta))
		Expect(src).To(BeAnExistingFile())
		Expect(filepath.Join(shared, "history")).NotTo(BeADirectory())
	})

	It("fails while the history folder refuses writes and succeeds once it is writable", func() {
		if os.Geteuid() == 0 {
			Skip("root writes into a 0500 folder")
		}
		src := sealedFile(storage, "sealed data")
		Expect(fsutil.MkdirAll(history)).To(Succeed())
		Expect(os.Chmod(history, 0o500)).To(Succeed())
		DeferCleanup(os.Chmod, history, os.FileMode(0o700))
		_, err := (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).To(MatchError(os.ErrPermission))
		Expect(src).To(BeAnExistingFile())
		Expect(os.Chmod(history, 0o700)).To(Succeed())
		_, err = (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		expectPublished(src, history, "sealed data")
	})

	It("fails while every create in the history folder is refused (as for root, who ignores 0500) and succeeds later", func() {
		src := sealedFile(storage, "sealed data")
		refusing := &recorder.Mover{FS: faultFS{fail: func(op, path string) error {
			if op == "open" && filepath.Dir(path) == history {
				return &os.PathError{Op: "open", Path: path, Err: syscall.EACCES}
			}
			return nil
		}}}
		_, err := refusing.Publish(ctx, src, history, testMeta())
		Expect(err).To(MatchError(os.ErrPermission))
		Expect(src).To(BeAnExistingFile())
		Expect(names(history)).To(BeEmpty())
		_, err = (&recorder.Mover{}).Publish(ctx, src, history, testMeta())
		Expect(err).NotTo(HaveOccurred())
		expectPublished(src, history, "sealed data")
	})

	It("reports a missing source and creates nothing", func() {
		_, err := (&recorder.Mover{}).Publish(ctx, filepath.Join(storage, "w-2026-10-13__08_00_00.db"), history, testMeta())
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(filepath.Join(shared, "history")).NotTo(BeADirectory())
	})

	It("stops before writing when its context is done", func() {
		src := sealedFile(storage, "sealed data")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := (&recorder.Mover{}).Publish(cctx, src, history, testMeta())
		Expect(err).To(MatchError(context.Canceled))
		Expect(src).To(BeAnExistingFile())
		Expect(names(history)).To(BeEmpty())
	})
})
