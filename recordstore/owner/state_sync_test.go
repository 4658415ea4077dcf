package owner

import (
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// syncCountFS is the real file system, counting file and folder fsyncs.
type syncCountFS struct {
	fsutil.OS
	mu          sync.Mutex
	files, dirs int
}

type syncCountFile struct {
	fsutil.File
	fs *syncCountFS
}

func (f syncCountFile) Sync() error {
	f.fs.mu.Lock()
	f.fs.files++
	f.fs.mu.Unlock()
	return f.File.Sync()
}

func (c *syncCountFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	f, err := c.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncCountFile{File: f, fs: c}, nil
}

func (c *syncCountFS) SyncDir(dir string) error {
	c.mu.Lock()
	c.dirs++
	c.mu.Unlock()
	return c.OS.SyncDir(dir)
}

func (c *syncCountFS) counts() (files, dirs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files, c.dirs
}

var _ = Describe("state file durability", func() {
	var counter *syncCountFS
	BeforeEach(func() {
		counter = &syncCountFS{}
		stateFS = counter
		DeferCleanup(func() { stateFS = fsutil.OS{} })
	})

	It("replaces the state without fsync, leaving no temp file, and removes it without fsync", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "s.owner.json")
		Expect(WriteState(path, State{Instance: "aaaa", Phase: PhaseStarting})).To(Succeed())
		Expect(WriteState(path, State{Instance: "aaaa", Phase: PhaseReady})).To(Succeed())
		got, err := ReadState(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Phase).To(Equal(PhaseReady))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1))
		Expect(removeStateIfOurs(path, "aaaa")).To(Succeed())
		Expect(path).NotTo(BeAnExistingFile())
		files, dirs := counter.counts()
		Expect([]int{files, dirs}).To(Equal([]int{0, 0}))
	})

	It("writes a state that carries damage durably: the file and its folder are fsynced", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.owner.json")
		st := State{Instance: "aaaa", Phase: PhaseReady, Corrupt: &Damage{Code: "corrupt", Message: "database disk image is malformed"}}
		Expect(WriteState(path, st)).To(Succeed())
		got, err := ReadState(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Corrupt).To(Equal(st.Corrupt))
		files, dirs := counter.counts()
		Expect([]int{files, dirs}).To(Equal([]int{1, 1}))
	})

	It("leaves the previous state and no temp file when the new one cannot be written", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "s.owner.json")
		Expect(WriteState(path, State{Instance: "aaaa", Phase: PhaseReady})).To(Succeed())
		Expect(WriteState(filepath.Join(dir, "missing", "s.owner.json"), State{Instance: "bbbb"})).To(HaveOccurred())
		got, err := ReadState(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Instance).To(Equal("aaaa"))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1))
	})
})
