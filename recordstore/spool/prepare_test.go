// Prepared batch folders (Options.Prepare): made after a publish, used by
// the next one, removed by Close, and never a reason for a publish to fail.

package spool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// fsyncLog is an FS that records every fsync: "dir/" for a folder, the
// path for a file.
type fsyncLog struct {
	fsutil.OS
	mu     sync.Mutex
	synced []string
}

type loggedFile struct {
	fsutil.File
	log *fsyncLog
}

func (f loggedFile) Sync() error {
	f.log.add(f.Name())
	return f.File.Sync()
}

func (l *fsyncLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.synced = append(l.synced, p)
}

func (l *fsyncLog) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	f, err := l.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return loggedFile{f, l}, nil
}

func (l *fsyncLog) SyncDir(dir string) error {
	l.add(dir + "/")
	return l.OS.SyncDir(dir)
}

// take returns what was fsynced since the last take.
func (l *fsyncLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.synced
	l.synced = nil
	return out
}

// tmpTree lists tmp/ as "folder/file" paths (and "folder/" for an empty
// folder).
func tmpTree(d *spool.Dir) []string {
	GinkgoHelper()
	var out []string
	dirs, err := os.ReadDir(d.Path(spool.StateTmp, ""))
	Expect(err).NotTo(HaveOccurred())
	for _, de := range dirs {
		files, err := os.ReadDir(d.Path(spool.StateTmp, de.Name()))
		Expect(err).NotTo(HaveOccurred())
		if len(files) == 0 {
			out = append(out, de.Name()+"/")
		}
		for _, f := range files {
			out = append(out, de.Name()+"/"+f.Name())
		}
	}
	return out
}

// preparedFolder waits for the one prepared folder and returns its name.
func preparedFolder(d *spool.Dir, ext string) string {
	GinkgoHelper()
	d.WaitPrepared()
	Eventually(func() int { return len(tmpTree(d)) }).Should(Equal(2))
	tree := tmpTree(d)
	folder := strings.Split(tree[0], "/")[0]
	Expect(tree).To(ConsistOf(folder+"/e00001"+ext, folder+"/"+spool.ManifestFile))
	for _, p := range tree {
		fi, err := os.Stat(d.Path(spool.StateTmp, p))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Size()).To(BeZero())
	}
	return folder
}

// folderFiles lists a batch folder of incoming/.
func folderFiles(d *spool.Dir, name spool.BatchName) []string {
	GinkgoHelper()
	ents, err := os.ReadDir(d.Path(spool.StateIncoming, name.String()))
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), e.Name())
		out = append(out, e.Name())
	}
	return out
}

var _ = Describe("prepared batch folders", func() {
	var (
		ctx context.Context
		d   *spool.Dir
		id  *spool.Identity
	)
	BeforeEach(func() {
		ctx = context.Background()
		d = newDir(spool.Options{Prepare: true})
		id = spool.NewIdentity("test-build")
		DeferCleanup(func() { Expect(d.Close()).To(Succeed()) })
	})

	appendOnly := func(rows []recordstore.Values) *recordstore.Batch {
		del := sampleBatch(id, rows)
		del.Entries = del.Entries[:1]
		return del
	}

	It("are made after a publish and filled by the next one, which loads like any batch", func() {
		rows := normalizeAll(allTypes(), edgeRows())
		_, err := d.Publish(ctx, appendOnly(rows), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		first := preparedFolder(d, ".ndjson")

		name, err := d.Publish(ctx, appendOnly(rows), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		Expect(folderFiles(d, name)).To(ConsistOf("e00001.ndjson", spool.ManifestFile))
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries[0].Rows).To(Equal(rows))

		next := preparedFolder(d, ".ndjson")
		Expect(next).NotTo(Equal(first), "the prepared folder was used, and a new one made")
	})

	DescribeTable("drop the prepared files a batch does not use",
		func(format string, entries func(*recordstore.Batch), want []string) {
			_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			preparedFolder(d, ".ndjson")
			del := sampleBatch(id, normalizeAll(allTypes(), edgeRows()))
			entries(del)
			name, err := d.Publish(ctx, del, format)
			Expect(err).NotTo(HaveOccurred())
			Expect(folderFiles(d, name)).To(ConsistOf(want))
			b, err := d.Load(ctx, spool.StateIncoming, name.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(b.Verify(ctx)).To(Succeed())
		},
		Entry("a seal only: no data file", spool.FormatNDJSON, func(del *recordstore.Batch) { del.Entries = del.Entries[2:] },
			[]string{spool.ManifestFile}),
		Entry("another codec", spool.FormatNDJSONGz, func(del *recordstore.Batch) { del.Entries = del.Entries[:1] },
			[]string{"e00001.ndjson.gz", spool.ManifestFile}),
	)

	It("a large entry replaces the prepared data file", func() {
		_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		preparedFolder(d, ".ndjson")
		big := make([]recordstore.Row, 3000)
		for i := range big {
			big[i] = recordstore.Row{"s": strings.Repeat("x", 2000), "i": i}
		}
		rows := normalizeAll(allTypes(), big) // about 6 MB: streamed to disk
		name, err := d.Publish(ctx, appendOnly(rows), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries[0].Rows).To(HaveLen(3000))
	})

	It("a prepared folder removed under the producer (tmp/ GC) costs nothing but a fresh folder", func() {
		_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.RemoveAll(d.Path(spool.StateTmp, preparedFolder(d, ".ndjson")))).To(Succeed())
		name, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		Expect(folderFiles(d, name)).To(ConsistOf("e00001.ndjson", spool.ManifestFile))
	})

	It("one a producer left behind is removed by the owner's GC after PreparedAge, not before", func() {
		name, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		folder := preparedFolder(d, ".ndjson") // the producer exits here without Close
		gcAt := func(later time.Duration) spool.GCResult {
			GinkgoHelper()
			owner, err := spool.OpenRoot(ctx, d.Root(), spool.Options{Now: func() time.Time { return time.Now().Add(later) }})
			Expect(err).NotTo(HaveOccurred())
			res, err := owner.GC(ctx, spool.GCOptions{})
			Expect(err).NotTo(HaveOccurred())
			return res
		}
		Expect(gcAt(time.Minute).Tmp).To(BeEmpty())
		Expect(gcAt(spool.DefaultPreparedAge + time.Minute).Tmp).To(Equal([]string{folder}))
		Expect(tmpTree(d)).To(BeEmpty())
		names, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(names).To(Equal([]spool.BatchName{name}), "the published batch is untouched")

		// The producer, still alive after all, took no harm: its next
		// publish finds its prepared folder gone and uses a fresh one.
		_, err = d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
	})

	It("Close removes the prepared folder, and nothing is prepared after it", func() {
		_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		preparedFolder(d, ".ndjson")
		Expect(d.Close()).To(Succeed())
		Expect(tmpTree(d)).To(BeEmpty())
		_, err = d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		Consistently(func() []string { return tmpTree(d) }, "100ms").Should(BeEmpty())
	})

	It("a refused publish leaves neither its folder nor the prepared one it took", func() {
		_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		preparedFolder(d, ".ndjson")
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = d.Publish(canceled, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).To(MatchError(context.Canceled))
		Expect(tmpTree(d)).To(BeEmpty())
		names, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(names).To(HaveLen(1), "only the first publish")
	})

	It("goes without a prepared folder when the preparation cannot make one, through the durable helper's FS", func() {
		mk := &mkdirFails{}
		Expect(d.Close()).To(Succeed())
		d = newDir(spool.WithFS(spool.Options{Prepare: true}, &fsutil.Helper{FS: mk}))
		publish := func() {
			GinkgoHelper()
			_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			d.WaitPrepared()
		}
		publish()
		Expect(os.ReadDir(d.Path(spool.StateTmp, ""))).To(HaveLen(1), "the next publish's folder is ready")
		mk.failing.Store(1)
		publish() // uses the prepared folder; preparing the next one fails
		Expect(mk.refused.Load()).To(BeNumerically(">=", 1))
		Expect(os.ReadDir(d.Path(spool.StateTmp, ""))).To(BeEmpty(), "nothing half-made is left")
		mk.failing.Store(0)
		publish() // makes a folder of its own
		names, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(names).To(HaveLen(3))
	})

	Describe("fsyncs", func() {
		var log *fsyncLog
		BeforeEach(func() {
			log = &fsyncLog{}
			Expect(d.Close()).To(Succeed())
			d = newDir(spool.WithFS(spool.Options{Prepare: true}, &fsutil.Helper{FS: log}))
		})

		It("the preparation fsyncs the folder, so a publish filling just its files fsyncs those and incoming/", func() {
			_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			folder := d.Path(spool.StateTmp, preparedFolder(d, ".ndjson"))
			Expect(log.take()).To(ContainElement(folder+"/"), "the preparation fsynced its folder")

			_, err = d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			d.WaitPrepared()
			synced := log.take()
			Expect(synced).To(ContainElements(filepath.Join(folder, "e00001.ndjson"), filepath.Join(folder, spool.ManifestFile), d.Path(spool.StateIncoming, "")+"/"))
			Expect(synced).NotTo(ContainElement(folder+"/"), "its entries were durable already")
			Expect(synced).NotTo(ContainElement(d.Path(spool.StateTmp, "")+"/"), "tmp/ is never read: losing a removal from it is harmless")
		})

		It("a publish that drops a prepared file fsyncs the folder", func() {
			_, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			folder := d.Path(spool.StateTmp, preparedFolder(d, ".ndjson"))
			log.take()
			del := sampleBatch(id, nil)
			del.Entries = del.Entries[2:] // a seal: no data file
			_, err = d.Publish(ctx, del, spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			Expect(log.take()).To(ContainElements(folder+"/", filepath.Join(folder, spool.ManifestFile)))
		})

		It("a publish into a fresh folder fsyncs it", func() {
			d = newDir(spool.WithFS(spool.Options{}, &fsutil.Helper{FS: log})) // no preparation
			name, err := d.Publish(ctx, appendOnly(normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			folder := d.Path(spool.StateTmp, name.Instance+"-"+name.ID)
			Expect(log.take()).To(ContainElements(folder+"/", filepath.Join(folder, "e00001.ndjson"), d.Path(spool.StateIncoming, "")+"/"))
		})
	})
})

// mkdirFails refuses every Mkdir while failing is set, counting refusals.
type mkdirFails struct {
	fsutil.OS
	failing, refused atomic.Int64
}

func (m *mkdirFails) Mkdir(name string, perm os.FileMode) error {
	if m.failing.Load() != 0 {
		m.refused.Add(1)
		return fmt.Errorf("mkdir %s: %w", name, syscall.ENOSPC)
	}
	return m.OS.Mkdir(name, perm)
}
