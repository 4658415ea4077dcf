// Specs for the submit-only backend: a writable SQLite backend plays the
// owner of a store and a submit-only backend on the same path, which reads
// nothing, submits its writes to it.

package submitonly_test

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

var _ = Describe("a submit-only backend", func() {
	var (
		path   string
		w      *sqlite.Backend
		so     *submitonly.Backend
		own    *owner
		events recordstore.Kind
		cause  error
	)
	BeforeEach(func() {
		path = storePath()
		w = openWritable(path)
		events = eventsKind()
		declare(w, events)
		_, err := w.Append(ctx, "s", "events", []recordstore.Row{{"name": "a"}})
		Expect(err).NotTo(HaveOccurred())
		own = &owner{b: w}
		cause = &versionError{owner: 1, build: 2}
		so, err = submitonly.Open(path, submitonly.Options{Cause: cause, Submit: own.submit, LivePath: w.LivePath()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(so.Close)
	})

	It("opens without touching a file, and closes", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "nothing")
		b, err := submitonly.Open(filepath.Join(dir, "records.sqlite"), submitonly.Options{Cause: cause})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.ReadOnly()).To(BeTrue())
		Expect(b.Detached()).To(BeIdenticalTo(cause))
		Expect(b.Epoch()).To(BeZero())
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue(), "the store folder was created")
		Expect(b.Close()).To(Succeed())
		Expect(b.Close()).To(Succeed())
		_, err = b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	})

	It("refuses to open without a cause", func() {
		_, err := submitonly.Open(path, submitonly.Options{Submit: own.submit})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
	})

	It("names the owner's live file as it was given", func() {
		Expect(so.LivePath()).To(Equal(w.LivePath()))
	})

	DescribeTable("fails a read with its cause, though the live file is there, submitting nothing",
		func(read func(b *submitonly.Backend) error) {
			expectCause(read(so))
			Expect(own.submitted()).To(BeZero())
		},
		Entry("Meta", func(b *submitonly.Backend) error { _, err := b.Meta(ctx, "s"); return err }),
		Entry("Streams", func(b *submitonly.Backend) error { _, err := b.Streams(ctx, ""); return err }),
		Entry("Streams of a kind", func(b *submitonly.Backend) error { _, err := b.Streams(ctx, "events"); return err }),
		Entry("Scan", func(b *submitonly.Backend) error {
			_, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
			return err
		}),
		Entry("Kinds", func(b *submitonly.Backend) error { _, err := b.Kinds(ctx); return err }),
		Entry("Kind", func(b *submitonly.Backend) error { _, err := b.Kind(ctx, "events"); return err }),
		Entry("ProducerSeq", func(b *submitonly.Backend) error { _, err := b.ProducerSeq(ctx, "x"); return err }),
		Entry("Promote", func(b *submitonly.Backend) error { return b.Promote(ctx) }),
	)

	It("fails BatchOutcome and WatchChanges with its cause, where the owner finds the batch", func() {
		declare(so, events)
		_, err := w.BatchOutcome(ctx, own.last().ID)
		Expect(err).NotTo(HaveOccurred())
		_, err = so.BatchOutcome(ctx, own.last().ID)
		expectCause(err)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeFalse(), "an unreadable ledger is not a missing batch")

		called := false
		expectCause(so.WatchChanges(ctx, func() { called = true }))
		Expect(called).To(BeFalse())
	})

	It("refuses the owner's own work with ErrReadOnly", func() {
		Expect(errors.Is(so.Sweep(ctx), recordstore.ErrReadOnly)).To(BeTrue())
		Expect(errors.Is(so.Sync(ctx), recordstore.ErrReadOnly)).To(BeTrue())
		_, err := so.SweepBatches(ctx, time.Now())
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		_, err = so.AppendBatch(ctx, recordstore.Batch{ID: "b1"})
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		Expect(own.submitted()).To(BeZero())
	})

	It("declares a kind through the owner and keeps it, submitting again only what changed", func() {
		kv := keyedKind("kv")
		st, err := so.DeclareKind(ctx, kv)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindCreated))
		Expect(own.batches).To(HaveLen(1))
		Expect(own.batches[0].Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpDeclare, Kind: "kv"}}))
		Expect(own.batches[0].Schemas).To(HaveLen(1))
		Expect(own.batches[0].Schemas[0].Name).To(Equal("kv"))
		stored, err := w.Kind(ctx, "kv")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Columns).To(Equal(kv.Columns))

		st, err = so.DeclareKind(ctx, kv)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))
		Expect(own.submitted()).To(Equal(1), "an unchanged declaration is not submitted")

		wider := kv
		wider.Columns = append(append([]recordstore.Column{}, kv.Columns...), recordstore.Column{Name: "note", Type: recordstore.TypeString})
		st, err = so.DeclareKind(ctx, wider)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUpdated))
		Expect(own.submitted()).To(Equal(2))
		stored, err = w.Kind(ctx, "kv")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Columns).To(HaveLen(len(kv.Columns) + 1))
		res, err := so.Append(ctx, "k", "kv", []recordstore.Row{{"id": "a", "note": "added column"}})
		Expect(err).NotTo(HaveOccurred(), "the kept kind has the added column")
		Expect(res.Appended).To(BeEquivalentTo(1))

		conflicting := kv
		conflicting.Key = []string{"v"}
		_, err = so.DeclareKind(ctx, conflicting)
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(3), "the conflict was refused locally")
	})

	It("declares a kind the owner has already, and learns the owner's status", func() {
		st, err := so.DeclareKind(ctx, events)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))
		Expect(own.submitted()).To(Equal(1), "the owner learns the declaration all the same")
	})

	It("appends against the kind it declared, sending that declaration, and returns the owner's exact result", func() {
		declare(so, events)
		res, err := so.Append(ctx, "s", "events", []recordstore.Row{{"name": "b", "ok": true}, {"n": 7}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 2, To: 3, Appended: 2}))
		sent := own.last()
		Expect(sent.Schemas).To(HaveLen(1))
		Expect(sent.Schemas[0].Columns).To(Equal(events.Columns))
		Expect(sent.Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: "events",
			Rows: normalized(events, recordstore.Row{"name": "b", "ok": true}, recordstore.Row{"n": 7})}}))
		out, err := w.BatchOutcome(ctx, sent.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(*out.Entries[0].Append).To(Equal(res))
		Expect(names(w, "s")).To(Equal([]any{"a", "b", nil}))
	})

	It("appends rows from a source, remapped into the kind it declared", func() {
		declare(so, events)
		narrow := recordstore.Kind{Name: "events", Columns: []recordstore.Column{
			{Name: "n", Type: recordstore.TypeInteger}, {Name: "name", Type: recordstore.TypeString}}}
		var buf recordstore.RowBuffer
		Expect(buf.Add(recordstore.Values{int64(3), "c"})).To(Succeed())
		res, err := so.AppendSource(ctx, "s", narrow, buf.Source())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Appended).To(BeEquivalentTo(1))
		Expect(own.last().Entries[0].Rows).To(Equal(normalized(events, recordstore.Row{"name": "c", "n": 3})))
		Expect(names(w, "s")).To(Equal([]any{"a", "c"}))
	})

	It("prepares an append with its declaration, without submitting it nor keeping the kind", func() {
		kv := keyedKind("kv")
		batch, err := so.PrepareAppend(ctx, "k", "kv", &kv, []recordstore.Row{{"id": "a"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(batch.Entries).To(HaveLen(2))
		Expect(batch.Entries[0]).To(Equal(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "kv"}))
		Expect(batch.Entries[1].Op).To(Equal(recordstore.OpAppend))
		Expect(own.submitted()).To(BeZero())
		_, err = so.PrepareAppend(ctx, "k", "kv", nil, []recordstore.Row{{"id": "a"}})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)

		decl, err := so.PrepareDeclare(ctx, []recordstore.Kind{kv, events})
		Expect(err).NotTo(HaveOccurred())
		Expect(decl.Entries).To(HaveLen(2))
		_, err = so.PrepareDeclare(ctx, []recordstore.Kind{kv, kv})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		entry, err := so.PrepareEntry(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "missing"})
		Expect(err).NotTo(HaveOccurred(), "whether the stream is live is the owner's to say")
		Expect(entry.Entries).To(HaveLen(1))
		_, err = so.PrepareEntry(ctx, recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "s"})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(BeZero())
	})

	DescribeTable("refuses a bad append locally, without submitting it",
		func(stream, kind string, rows []recordstore.Row, want error, says string) {
			declare(so, keyedKind("kv"))
			before := own.submitted()
			_, err := so.Append(ctx, stream, kind, rows)
			Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(says))
			Expect(own.submitted()).To(Equal(before))
		},
		Entry("a kind this process did not declare, though the owner has it",
			"s", "events", []recordstore.Row{{"name": "b"}}, recordstore.ErrNotFound, "declare it first"),
		Entry("a kind nobody declared", "s", "nokind", []recordstore.Row{{"name": "b"}}, recordstore.ErrNotFound, "detached"),
		Entry("a row that does not fit", "k", "kv", []recordstore.Row{{"id": 5}}, recordstore.ErrInvalid, "column id"),
		Entry("a key repeated", "k", "kv", []recordstore.Row{{"id": "a", "ver": 1}, {"id": "a", "ver": 2}}, recordstore.ErrInvalid, "rows 1 and 2 have the same key"),
		Entry("no rows", "k", "kv", []recordstore.Row{}, recordstore.ErrInvalid, "no rows"),
		Entry("a bad stream id", "", "kv", []recordstore.Row{{"id": "a"}}, recordstore.ErrInvalid, "stream"),
	)

	It("carries the cause in the refusal of an undeclared kind", func() {
		_, err := so.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		expectCause(err)
	})

	It("submits stream mutations unchecked and returns the owner's answers", func() {
		m, err := so.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(mustMeta(w, "s")))
		Expect(m.Sealed).To(BeTrue())
		declare(so, events)
		_, err = so.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		var be *recordstore.BatchError
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner refused it, not a local check")

		m, err = so.Reopen(ctx, "s", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeFalse())
		m, err = so.Expire(ctx, "s", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.ExpiresAt).NotTo(BeNil())
		m, err = so.Trim(ctx, "s", time.Now().Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Total).To(BeZero())
		Expect(so.Delete(ctx, "s")).To(Succeed())
		_, err = w.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())

		before := own.submitted()
		_, err = so.Seal(ctx, "missing")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(errors.As(err, &be)).To(BeTrue(), "the owner said the stream is missing")
		_, err = so.Reopen(ctx, "missing", 3)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(before + 2))
	})

	It("returns an error of Submit itself unchanged, and keeps no kind it could not declare", func() {
		pending := &pendingError{id: "b1"}
		own.fail = pending
		_, err := so.DeclareKind(ctx, events)
		Expect(err).To(BeIdenticalTo(pending))
		own.fail = nil
		_, err = so.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(1))
	})

	It("holds a declaration to Options.CheckKind before submitting it, in every way of declaring", func() {
		b, err := submitonly.Open(path, submitonly.Options{Cause: cause, Submit: own.submit,
			CheckKind: func(k recordstore.Kind) error { return sqlite.CheckKindName(k.Name) }})
		Expect(err).NotTo(HaveOccurred())
		reserved := keyedKind("record_kv")
		_, err = b.DeclareKind(ctx, reserved)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("reserved"))
		_, err = b.CheckDeclare(ctx, reserved)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		_, err = b.PrepareDeclare(ctx, []recordstore.Kind{reserved})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		_, err = b.PrepareAppend(ctx, "k", "record_kv", &reserved, []recordstore.Row{{"id": "a"}})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(BeZero())
		_, err = w.Kind(ctx, "record_kv")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)

		_, err = b.DeclareKind(ctx, keyedKind("kv"))
		Expect(err).NotTo(HaveOccurred(), "a name CheckKind takes")
	})

	It("refuses mutations with ErrReadOnly without Submit", func() {
		b, err := submitonly.Open(path, submitonly.Options{Cause: cause})
		Expect(err).NotTo(HaveOccurred())
		_, err = b.DeclareKind(ctx, events)
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%v", err)
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%v", err)
		expectCause(b.Promote(ctx))
	})
})
