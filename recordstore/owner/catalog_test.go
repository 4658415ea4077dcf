// Specs for a non-owner whose owner runs another catalog version: an owner
// child of this build's version, and this process opening the store as a
// build of the next version, detached.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// otherVersion is the catalog version of the build this process plays.
const otherVersion = sqlite.CatalogVersion + 1

// openOtherVersion opens the store at path in this process as a build of
// otherVersion, detached when detached is set, counting the batches it
// sends to the owner (published to the spool, or sent inline) in
// published. A store it opens is closed at the end of the spec.
func openOtherVersion(ctx context.Context, path string, detached bool, published *atomic.Int64) (*records.Store, error) {
	opts := owner.Options[records.Backend]{
		Path: path, Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (records.Backend, error) {
			b, err := sqliteOpener(path)(ctx, readOnly, submit)
			if err != nil {
				return nil, err
			}
			return b, nil
		},
		CatalogVersion: otherVersion,
		StartWait:      wait, PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond,
		Failpoint: func(name string) {
			if name == owner.FailAfterPublish || name == owner.FailInlineAfterSend {
				published.Add(1) // through the spool, or over the socket (the fast path)
			}
		},
	}
	if detached {
		opts.OpenDetached = func(_ context.Context, submit owner.Submitter, cause error) (records.Backend, error) {
			return submitonly.Open(path, submitonly.Options{Cause: cause, Submit: submit, LivePath: sqlite.LivePath(path)})
		}
	}
	s, err := owner.Open(ctx, opts)
	if err == nil {
		DeferCleanup(func() { _ = s.Close() })
	}
	return s, err
}

// detachedBeside starts an owner child of path (this build, options opts)
// and opens path here as a process of another catalog version, detached;
// published counts the batches this process publishes.
func detachedBeside(ctx context.Context, path string, opts *rt.StoreOptions) (*rt.Child, *records.Store, *atomic.Int64) {
	GinkgoHelper()
	own := startOwner(path, opts, nil)
	published := new(atomic.Int64)
	s, err := openOtherVersion(ctx, path, true, published)
	Expect(err).NotTo(HaveOccurred())
	return own, s, published
}

// readerHere opens the store's live file read-only in this process, as a
// build of the store's own catalog version reads it.
func readerHere(path string) *sqlite.Backend {
	GinkgoHelper()
	b, err := sqlite.Open(context.Background(), path, sqlite.Options{ReadOnly: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.Close)
	return b
}

// expectCatalogVersion checks that err is the detached process's refusal.
func expectCatalogVersion(err error) {
	GinkgoHelper()
	Expect(errors.Is(err, owner.ErrCatalogVersion)).To(BeTrue(), "%v", err)
	var ce *owner.CatalogVersionError
	Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
	Expect(*ce).To(Equal(owner.CatalogVersionError{Owner: sqlite.CatalogVersion, Build: otherVersion}))
	Expect(recordstore.Code(err)).To(Equal("catalog_version"))
}

// tree lists every file and folder under dir with its mode, time and size,
// to show that nothing changed.
func tree(dir string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	Expect(filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(fi.Mode(), fi.ModTime(), fi.Size())
		return nil
	})).To(Succeed())
	return out
}

// row is one event row.
func row(k string) recordstore.Row { return recordstore.Row{"k": k} }

// recordKeys returns the k column of records, in seq order.
func recordKeys(recs []recordstore.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i], _ = r.Values["k"].(string)
	}
	return out
}

var _ = Describe("a non-owner of another catalog version", Label("integration"), func() {
	It("opens detached and fails its reads fast, changing nothing", func(ctx SpecContext) {
		path := storePath()
		// The owner writes nothing on its own while the spec looks.
		own, s, published := detachedBeside(ctx, path, with(func(o *rt.StoreOptions) { o.Heartbeat, o.GCInterval = time.Hour, time.Hour }))
		Expect(s.Role()).To(Equal(owner.RoleDetached))
		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Role).To(Equal(owner.RoleDetached))
		Expect(st.CatalogVersion).To(Equal(sqlite.CatalogVersion))
		Expect(st.PID).To(Equal(own.Pid()))

		before := tree(filepath.Dir(path))
		b := s.Backend()
		_, err = b.Meta(ctx, "s")
		expectCatalogVersion(err)
		_, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		expectCatalogVersion(err)
		_, err = b.Streams(ctx, "")
		expectCatalogVersion(err)
		_, err = b.Kinds(ctx)
		expectCatalogVersion(err)
		_, err = b.Kind(ctx, "event")
		expectCatalogVersion(err)
		actx, cancel := context.WithTimeout(ctx, 10*time.Second) // a pending error, not a hang, if it waited
		_, err = s.Await(actx, "0123456789abcdef0123456789abcdef")
		cancel()
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "the owner says it knows no such batch: %v", err)
		Expect(tree(filepath.Dir(path))).To(Equal(before), "a read changed a file")
		Expect(published.Load()).To(BeZero())

		Expect(s.Close()).To(Succeed())
		Expect(s.Role()).To(Equal(owner.RoleClosed))
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})

	It("writes through the owner, which applies and answers exactly; what it cannot check goes to the owner", func(ctx SpecContext) {
		path := storePath()
		own, s, published := detachedBeside(ctx, path, fast())
		b := s.Backend()

		_, err := b.Append(ctx, "s", "event", []recordstore.Row{row("early")})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("detached"))
		expectCatalogVersion(err)
		Expect(published.Load()).To(BeZero(), "the refused append was published")
		Expect(incoming(path)).To(BeEmpty())

		status, err := b.DeclareKind(ctx, *eventKind())
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(recordstore.KindUnchanged), "the owner's catalog has the kind")
		res, err := b.Append(ctx, "s", "event", []recordstore.Row{row("a"), row("b"), row("c")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 3, Appended: 3}))
		res, err = b.Append(ctx, "s", "event", []recordstore.Row{row("d"), row("e")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 4, To: 5, Appended: 2}))
		Expect(published.Load()).To(BeEquivalentTo(3))

		r := readerHere(path)
		recs, err := r.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recordKeys(recs)).To(Equal([]string{"a", "b", "c", "d", "e"}))
		Expect(recs[4].Seq).To(BeEquivalentTo(5))

		_, err = b.Append(ctx, "s", "nokind", []recordstore.Row{row("x")})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(published.Load()).To(BeEquivalentTo(3), "the refused append was published")

		m, err := b.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeTrue())
		Expect(m.HighSeq).To(BeEquivalentTo(5))
		_, err = b.Append(ctx, "s", "event", []recordstore.Row{row("f")})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		var be *recordstore.BatchError
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner refused it: %v", err)
		Expect(published.Load()).To(BeEquivalentTo(5))

		_, err = b.Seal(ctx, "missing")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner refused it: %v", err)

		expectCatalogVersion(b.Promote(ctx))
		Expect(s.Role()).To(Equal(owner.RoleDetached))
		recs, err = r.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recordKeys(recs)).To(Equal([]string{"a", "b", "c", "d", "e"}))

		Expect(s.Close()).To(Succeed())
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})

	It("never takes the store over: a write waits in the spool for an owner of the store's version, applied once", func(ctx SpecContext) {
		path := storePath()
		own, s, _ := detachedBeside(ctx, path, fast())
		b := s.Backend()
		_, err := b.DeclareKind(ctx, *eventKind())
		Expect(err).NotTo(HaveOccurred())
		res, err := b.Append(ctx, "s", "event", []recordstore.Row{row("a")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.To).To(BeEquivalentTo(1))

		Expect(own.Kill()).To(Succeed())
		Consistently(s.Role, time.Second, 50*time.Millisecond).Should(Equal(owner.RoleDetached))
		release, err := owner.Exclusive(owner.PathsFor(path).Lock, "")
		Expect(err).NotTo(HaveOccurred(), "the detached process took the lock")
		Expect(release()).To(Succeed())

		actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = b.Append(actx, "s", "event", []recordstore.Row{row("late")})
		cancel()
		var pe *owner.PendingError
		Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		// The killed owner's applied batches may still be in incoming/ too:
		// they leave it only after the owner's next Sync.
		names := incoming(path)
		ids := make([]string, len(names))
		for i, n := range names {
			ids[i] = n.ID
		}
		Expect(ids).To(ContainElement(pe.BatchID))

		Expect(s.Close()).To(Succeed())
		Expect(incoming(path)).To(Equal(names), "the detached process drained on Close")
		_, err = owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred(), "the killed owner's state is still there")

		next := startProducer(path, fast(), nil, hold(), closeStore())
		Expect(next.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleOwner)))
		Eventually(func() []spool.BatchName { return incoming(path) }, wait, 20*time.Millisecond).Should(BeEmpty())
		r := readerHere(path)
		out, err := r.BatchOutcome(ctx, pe.BatchID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(*out.Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 2, To: 2, Appended: 1}))
		recs, err := r.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recordKeys(recs)).To(Equal([]string{"a", "late"}))

		Expect(next.Release()).To(Succeed())
		next.MustFinish(wait)
	})

	It("refuses to open without OpenDetached, holding nothing", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		var published atomic.Int64
		s, err := openOtherVersion(ctx, path, false, &published)
		Expect(s).To(BeNil())
		expectCatalogVersion(err)

		s, err = openOtherVersion(ctx, path, true, &published)
		Expect(err).NotTo(HaveOccurred(), "the refused open left nothing registered")
		Expect(s.Role()).To(Equal(owner.RoleDetached))
		Expect(s.Close()).To(Succeed())
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})
})
