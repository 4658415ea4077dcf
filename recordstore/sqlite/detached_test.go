// Specs for detached mode: a writable backend plays the owner of a store and
// a detached backend on the same path, which reads nothing, submits its
// writes to it through a Submit function, in one process.

package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// errVersion and versionError stand for the owner package's
// ErrCatalogVersion and *CatalogVersionError: the cause a detached backend
// is opened with, which its errors must carry for errors.Is and errors.As.
var errVersion = errors.New("catalog version mismatch")

type versionError struct{ owner, build int }

func (e *versionError) Error() string {
	return fmt.Sprintf("owner has catalog version %d, this build %d", e.owner, e.build)
}

func (e *versionError) Unwrap() error { return errVersion }

// expectCause checks that err carries the detached backend's cause.
func expectCause(err error) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(errors.Is(err, errVersion)).To(BeTrue(), "%v", err)
	var ve *versionError
	Expect(errors.As(err, &ve)).To(BeTrue(), "%v", err)
	Expect(*ve).To(Equal(versionError{owner: 1, build: 2}))
}

var _ = Describe("detached mode", func() {
	var (
		path   string
		w      *sqlite.Backend
		det    *sqlite.Backend
		own    *owner
		events recordstore.Kind
		cause  error
	)
	BeforeEach(func() {
		path = storePath()
		w = openAt(path, sqlite.Options{})
		events = eventsKind()
		declare(w, events)
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		own = &owner{b: w}
		cause = &versionError{owner: 1, build: 2}
		det = openAt(path, sqlite.Options{ReadOnly: true, Submit: own.submit, Detached: cause})
	})

	It("opens without touching a file, and closes", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "nothing")
		b, err := sqlite.Open(ctx, filepath.Join(dir, "records.sqlite"), sqlite.Options{ReadOnly: true, Detached: cause})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.ReadOnly()).To(BeTrue())
		Expect(b.Detached()).To(BeIdenticalTo(cause))
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "the store folder was created")
		Expect(b.Close()).To(Succeed())
		_, err = b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
		Expect(w.Detached()).To(BeNil())
	})

	It("refuses Detached without ReadOnly, creating nothing", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "nothing")
		_, err := sqlite.Open(ctx, filepath.Join(dir, "records.sqlite"), sqlite.Options{Detached: cause})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	})

	DescribeTable("fails a read with its cause, though the live file is there, submitting nothing",
		func(read func(b *sqlite.Backend) error) {
			expectCause(read(det))
			Expect(own.submitted()).To(BeZero())
			Expect(read(w)).To(Succeed(), "the same read on the owner")
		},
		Entry("Meta", func(b *sqlite.Backend) error { _, err := b.Meta(ctx, "s"); return err }),
		Entry("Streams", func(b *sqlite.Backend) error { _, err := b.Streams(ctx, ""); return err }),
		Entry("Streams of a kind", func(b *sqlite.Backend) error { _, err := b.Streams(ctx, "events"); return err }),
		Entry("Scan", func(b *sqlite.Backend) error {
			_, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
			return err
		}),
		Entry("Kinds", func(b *sqlite.Backend) error { _, err := b.Kinds(ctx); return err }),
		Entry("Kind", func(b *sqlite.Backend) error { _, err := b.Kind(ctx, "events"); return err }),
		Entry("ProducerSeq", func(b *sqlite.Backend) error { _, err := b.ProducerSeq(ctx, "x"); return err }),
		Entry("Promote", func(b *sqlite.Backend) error { return b.Promote(ctx) }),
	)

	It("fails BatchOutcome and WatchChanges with its cause, where the owner finds the batch and watches", func() {
		res, err := w.AppendBatch(ctx, newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "b"})))
		Expect(err).NotTo(HaveOccurred())
		_, err = w.BatchOutcome(ctx, res[0].ID)
		Expect(err).NotTo(HaveOccurred())
		_, err = det.BatchOutcome(ctx, res[0].ID)
		expectCause(err)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeFalse(), "an unreadable ledger is not a missing batch")

		called := false
		expectCause(det.WatchChanges(ctx, func() { called = true }))
		Expect(called).To(BeFalse())
	})

	It("still refuses the owner's own work with ErrReadOnly", func() {
		Expect(errors.Is(det.Sweep(ctx), recordstore.ErrReadOnly)).To(BeTrue())
		_, err := det.SweepBatches(ctx, time.Now())
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		_, err = det.AppendBatch(ctx, newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "b"})))
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		Expect(own.submitted()).To(BeZero())
	})

	It("declares a kind through the owner and keeps it, submitting again only what changed", func() {
		kv := keyedKind("kv", recordstore.ConflictSkip)
		st, err := det.DeclareKind(ctx, kv)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindCreated))
		Expect(own.batches).To(HaveLen(1))
		Expect(own.batches[0].Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpDeclare, Kind: "kv"}}))
		Expect(own.batches[0].Schemas).To(HaveLen(1))
		Expect(own.batches[0].Schemas[0].Name).To(Equal("kv"))
		stored, err := w.Kind(ctx, "kv")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Columns).To(Equal(kv.Columns))

		st, err = det.DeclareKind(ctx, kv)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))
		Expect(own.submitted()).To(Equal(1), "an unchanged declaration is not submitted")

		wider := kv
		wider.Columns = append(append([]recordstore.Column{}, kv.Columns...), recordstore.Column{Name: "note", Type: recordstore.TypeString})
		st, err = det.DeclareKind(ctx, wider)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUpdated))
		Expect(own.submitted()).To(Equal(2))
		stored, err = w.Kind(ctx, "kv")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Columns).To(HaveLen(len(kv.Columns) + 1))
		res, err := det.Append(ctx, "k", "kv", []recordstore.Row{{"id": "a", "note": "added column"}})
		Expect(err).NotTo(HaveOccurred(), "the kept kind has the added column")
		Expect(res.Appended).To(BeEquivalentTo(1))

		conflicting := kv
		conflicting.Key = []string{"v"}
		_, err = det.DeclareKind(ctx, conflicting)
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(3), "the conflict was refused locally")
	})

	It("declares a kind the owner has already, and learns the owner's status", func() {
		st, err := det.DeclareKind(ctx, events)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))
		Expect(own.submitted()).To(Equal(1), "the owner learns the declaration all the same")
	})

	It("appends against the kind it declared, sending that declaration, and returns the owner's exact result", func() {
		declare(det, events)
		res, err := det.Append(ctx, "s", "events", []recordstore.Row{{"name": "b", "ok": true}, {"n": 7}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 2, To: 3, Appended: 2}))
		sent := own.batches[len(own.batches)-1]
		Expect(sent.Schemas).To(HaveLen(1))
		Expect(sent.Schemas[0].Columns).To(Equal(events.Columns))
		Expect(sent.Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: "events",
			Rows: normalized(events, recordstore.Row{"name": "b", "ok": true}, recordstore.Row{"n": 7})}}))
		out, err := w.BatchOutcome(ctx, sent.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(*out.Entries[0].Append).To(Equal(res))
		Expect(values(mustScan(w, "s"), "name")).To(Equal([]any{"a", "b", nil}))
	})

	DescribeTable("refuses a bad append locally, without submitting it",
		func(stream, kind string, rows []recordstore.Row, want error, says string) {
			declare(det, keyedKind("kv", recordstore.ConflictSkip))
			before := own.submitted()
			_, err := det.Append(ctx, stream, kind, rows)
			Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(says))
			Expect(own.submitted()).To(Equal(before))
		},
		Entry("a kind this process did not declare, though the owner has it",
			"s", "events", []recordstore.Row{{"name": "b"}}, recordstore.ErrNotFound, "declare it first"),
		Entry("a kind nobody declared", "s", "nokind", []recordstore.Row{{"name": "b"}}, recordstore.ErrNotFound, "detached"),
		Entry("a row that does not fit", "k", "kv", []recordstore.Row{{"id": 5}}, recordstore.ErrInvalid, "column id"),
		Entry("a key repeated", "k", "kv", []recordstore.Row{kv("a", "", 1, ""), kv("a", "", 2, "")}, recordstore.ErrInvalid, "same key"),
		Entry("no rows", "k", "kv", []recordstore.Row{}, recordstore.ErrInvalid, "no rows"),
	)

	It("carries the cause in the refusal of an undeclared kind", func() {
		_, err := det.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		expectCause(err)
	})

	It("submits stream mutations unchecked and returns the owner's answers", func() {
		m, err := det.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(mustMeta(w, "s")))
		Expect(m.Sealed).To(BeTrue())
		declare(det, events)
		_, err = det.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		var be *recordstore.BatchError
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner refused it, not a local check")

		m, err = det.Reopen(ctx, "s", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeFalse())
		m, err = det.Expire(ctx, "s", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.ExpiresAt).NotTo(BeNil())
		m, err = det.Trim(ctx, "s", time.Now().Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Total).To(BeZero())
		Expect(det.Delete(ctx, "s")).To(Succeed())
		_, err = w.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())

		before := own.submitted()
		_, err = det.Seal(ctx, "missing")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner said the stream is missing")
		_, err = det.Reopen(ctx, "missing", 3)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(before + 2))
	})

	It("returns an error of Submit itself unchanged, and keeps no kind it could not declare", func() {
		pending := &pendingError{id: "b1"}
		own.fail = pending
		_, err := det.DeclareKind(ctx, events)
		Expect(err).To(BeIdenticalTo(pending))
		own.fail = nil
		_, err = det.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(1))
	})

	It("refuses mutations with ErrReadOnly without Submit", func() {
		b := openAt(path, sqlite.Options{ReadOnly: true, Detached: cause})
		_, err := b.DeclareKind(ctx, events)
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%v", err)
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%v", err)
		expectCause(b.Promote(ctx))
	})
})
