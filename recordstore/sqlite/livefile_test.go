// Specs of the live file's identity: Promote refuses, writing nothing,
// when the file a read-only backend opened was removed or replaced.

package sqlite_test

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("the live file a read-only backend opened", func() {
	var (
		path, live string
		ro         *sqlite.Backend
		events     recordstore.Kind
	)
	// removeLive removes the live file and its sidecars, as deleting the
	// store does.
	removeLive := func() {
		for _, p := range []string{live, live + "-wal", live + "-shm"} {
			Expect(os.Remove(p)).To(Or(Succeed(), MatchError(os.ErrNotExist)))
		}
	}
	// names lists the live file's folder.
	names := func() []string {
		entries, err := os.ReadDir(filepath.Dir(live))
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	// refusesAndWritesNothing promotes ro and expects the refusal, with the
	// folder as it was and the backend read-only, still reading its file.
	refusesAndWritesNothing := func() {
		GinkgoHelper()
		before, epoch := names(), ro.Epoch()
		Expect(ro.CheckLiveFile()).To(MatchError(sqlite.ErrLiveFileGone))
		err := ro.Promote(ctx)
		Expect(err).To(MatchError(sqlite.ErrLiveFileGone))
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(recordstore.Code(err)).To(Equal("not_found"))
		Expect(names()).To(Equal(before))
		Expect(ro.ReadOnly()).To(BeTrue())
		Expect(ro.Epoch()).To(Equal(epoch))
		Expect(mustScan(ro, "s")).To(HaveLen(1), "reads go on in the file it opened")
	}

	BeforeEach(func() {
		path = storePath()
		w, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		events = eventsKind()
		declare(w, events)
		mustAppend(w, "s", events.Name, recordstore.Row{"name": "first"})
		live = w.LivePath()
		Expect(w.Close()).To(Succeed())
		// One reader connection: the one open before the file goes (a
		// connection opened after it would not find the file, or would
		// open the other one).
		ro = openAt(path, sqlite.Options{ReadOnly: true, ReadConns: 1})
		Expect(ro.CheckLiveFile()).To(Succeed())
	})

	It("is still checked after Close, against the file the backend had open", func() {
		data, err := os.ReadFile(live)
		Expect(err).NotTo(HaveOccurred())
		removeLive()
		Expect(os.WriteFile(live, data, 0o600)).To(Succeed()) // the same bytes, another file
		Expect(ro.Close()).To(Succeed())
		Expect(ro.CheckLiveFile()).To(MatchError(sqlite.ErrLiveFileGone))
		Expect(os.Remove(live)).To(Succeed())
		Expect(ro.CheckLiveFile()).To(MatchError(sqlite.ErrLiveFileGone))
	})

	It("answers after Close that the file is the one it had open", func() {
		Expect(ro.Close()).To(Succeed())
		Expect(ro.CheckLiveFile()).To(Succeed())
	})

	It("is refused by Promote once removed, which then creates no file", func() {
		removeLive()
		refusesAndWritesNothing()
		Expect(live).NotTo(BeAnExistingFile())
	})

	It("is refused by Promote once another file was put at its path, which is left untouched", func() {
		other := filepath.Join(GinkgoT().TempDir(), "other.sqlite")
		o, err := sqlite.Open(ctx, other, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		otherLive, otherEpoch := o.LivePath(), o.Epoch()
		Expect(o.Close()).To(Succeed())
		removeLive()
		Expect(os.Rename(otherLive, live)).To(Succeed())
		fi, err := os.Stat(live)
		Expect(err).NotTo(HaveOccurred())

		refusesAndWritesNothing()

		now, err := os.Stat(live)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.SameFile(fi, now)).To(BeTrue())
		Expect(now.Size()).To(Equal(fi.Size()))
		Expect(now.ModTime()).To(Equal(fi.ModTime()))
		Expect(live + "-wal").NotTo(BeAnExistingFile())
		check := openAt(path, sqlite.Options{ReadOnly: true, ReadOnlyFile: true})
		Expect(check.Epoch()).To(Equal(otherEpoch), "no epoch was written into the new file")
		Expect(check.Streams(ctx, "")).To(BeEmpty())
	})

	It("is promoted as before while it is still in place", func() {
		epoch := ro.Epoch()
		Expect(ro.Promote(ctx)).To(Succeed())
		Expect(ro.Epoch()).To(Equal(epoch + 1))
		mustAppend(ro, "s", events.Name, recordstore.Row{"name": "second"})
		Expect(mustScan(ro, "s")).To(HaveLen(2))
	})
})

var _ = Describe("a reader connection opened after the live file was removed", func() {
	It("creates no file at the path", func() {
		path := storePath()
		w := openAt(path, sqlite.Options{})
		k := eventsKind()
		declare(w, k)
		mustAppend(w, "s", k.Name, recordstore.Row{"name": "first"})
		live := w.LivePath()
		ro := openAt(path, sqlite.Options{ReadOnly: true, ReadConns: 2, ChangeInterval: time.Hour})
		Expect(w.Close()).To(Succeed())
		// The view holds the pool's open connection while fn runs: the
		// Scan in fn needs a second one, opened after the removal.
		err := ro.RunView(ctx, k.Name, "SELECT name FROM rows", "s", 0, 10, 0, func([]any) error {
			for _, p := range []string{live, live + "-wal", live + "-shm"} {
				Expect(os.Remove(p)).To(Or(Succeed(), MatchError(os.ErrNotExist)))
			}
			_, _ = ro.Scan(ctx, "s", recordstore.ScanOptions{})
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(live).NotTo(BeAnExistingFile())
	})
})

var _ = Describe("the live file after a Rotate", func() {
	It("is the new file: the backend checks and promotes as before, and so does a read-only one opened on it", func() {
		w := newWorker()
		first, second := w.file("1"), w.file("2")
		b, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: first, SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		k := eventsKind()
		declare(b, k)
		_, err = b.Rotate(ctx, second)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Remove(first)).To(Succeed()) // sealed and moved away, say
		Expect(b.CheckLiveFile()).To(Succeed())
		Expect(b.Promote(ctx)).To(Succeed())
		mustAppend(b, "s", k.Name, recordstore.Row{"name": "after"})
		epoch := b.Epoch()
		Expect(b.Close()).To(Succeed())

		ro := openAt(w.path, sqlite.Options{LiveFile: second, ReadOnly: true})
		Expect(ro.CheckLiveFile()).To(Succeed())
		Expect(ro.Promote(ctx)).To(Succeed())
		Expect(ro.Epoch()).To(Equal(epoch + 1))
		mustAppend(ro, "s", k.Name, recordstore.Row{"name": "promoted"})
		Expect(mustScan(ro, "s")).To(HaveLen(2))
	})
})
