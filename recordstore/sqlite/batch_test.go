// SQLite-specific specs for AppendBatch: the epoch across a reopen, the
// ledger's table and indexes, foreign schemas and their column order,
// declares inside a batch. The BatchAppender contract itself (exactly once,
// entry isolation, Failure, Retry, group commit, row sources) is the
// shared suite's, run in conformance_test.go.

package sqlite_test

import (
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// batchSeq numbers the batches the specs build.
var batchSeq int64

// newBatch returns a batch of producer "p1" with a fresh id and seq.
func newBatch(schemas []recordstore.Kind, entries ...recordstore.BatchEntry) recordstore.Batch {
	batchSeq++
	return recordstore.Batch{
		ID:       fmt.Sprintf("batch-%06d", batchSeq),
		Producer: recordstore.Producer{Instance: "p1", Seq: batchSeq},
		Schemas:  schemas,
		Entries:  entries,
	}
}

// normalized turns rows into stored values of k, in k's column order.
func normalized(k recordstore.Kind, rows ...recordstore.Row) []recordstore.Values {
	out := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		Expect(err).NotTo(HaveOccurred())
		out[i] = v
	}
	return out
}

func appendEntry(stream string, k recordstore.Kind, rows ...recordstore.Row) recordstore.BatchEntry {
	return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Rows: normalized(k, rows...)}
}

func mustBatch(b *sqlite.Backend, batches ...recordstore.Batch) []recordstore.BatchResult {
	res, err := b.AppendBatch(ctx, batches...)
	Expect(err).NotTo(HaveOccurred())
	Expect(res).To(HaveLen(len(batches)))
	return res
}

// codes returns the error code of every entry ("" when it applied).
func codes(res recordstore.BatchResult) []string {
	out := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = recordstore.Code(e.Err())
	}
	return out
}

var _ = Describe("AppendBatch", func() {
	var (
		b      *sqlite.Backend
		clk    *clock
		path   string
		events recordstore.Kind
	)
	BeforeEach(func() {
		clk = newClock()
		path = storePath()
		b = openAt(path, sqlite.Options{Now: clk.Now})
		events = eventsKind()
		declare(b, events)
	})

	It("applies a batch id once: again, even after a reopen, it writes nothing and returns the recorded result", func() {
		batch := newBatch([]recordstore.Kind{events}, appendEntry("s", events, recordstore.Row{"name": "a"}, recordstore.Row{"name": "b"}))
		res := mustBatch(b, batch)
		Expect(res[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(res[0].Epoch).To(Equal(b.Epoch()))
		Expect(res[0].IngestedAt).To(Equal(clk.Now()))
		Expect(res[0].Entries).To(HaveLen(1))
		Expect(*res[0].Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 1, To: 2, Appended: 2}))

		clk.Advance(time.Minute)
		Expect(mustBatch(b, batch)).To(Equal(res))
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(res[0]))

		Expect(b.Close()).To(Succeed())
		b = openAt(path, sqlite.Options{Now: clk.Now})
		Expect(b.Epoch()).To(BeNumerically(">", res[0].Epoch))
		Expect(mustBatch(b, batch)).To(Equal(res))
		Expect(mustMeta(b, "s").HighSeq).To(BeEquivalentTo(2))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(1))
	})

	It("adds the columns a batch's schema adds, with its rows in the schema's own order", func() {
		foreign := recordstore.Kind{Name: "events", Columns: []recordstore.Column{
			{Name: "extra", Type: recordstore.TypeString},
			{Name: "n", Type: recordstore.TypeInteger},
			{Name: "name", Type: recordstore.TypeString},
		}}
		e := appendEntry("s", foreign, recordstore.Row{"name": "a", "n": int64(1), "extra": "more"})
		res := mustBatch(b, newBatch([]recordstore.Kind{foreign}, e))[0]
		Expect(codes(res)).To(Equal([]string{""}))
		k, err := b.Kind(ctx, "events")
		Expect(err).NotTo(HaveOccurred())
		want := eventsKind()
		want.Columns = append(want.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
		Expect(k.Columns).To(Equal(want.Columns))
		recs := mustScan(b, "s")
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Values).To(HaveKeyWithValue("extra", "more"))
		Expect(recs[0].Values).To(HaveKeyWithValue("name", "a"))
		Expect(recs[0].Values).To(HaveKeyWithValue("n", int64(1)))
		Expect(recs[0].Values).To(HaveKeyWithValue("x", BeNil()))
		// A direct append after the batch sees the added column too.
		mustAppend(b, "s", "events", recordstore.Row{"extra": "direct"})
	})

	It("applies a zero-row append: the stream exists, empty, and can be sealed in the same entry", func() {
		empty := recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "e1", Kind: "events"}
		sealedEmpty := recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "e2", Kind: "events", Seal: true}
		res := mustBatch(b, newBatch(nil, empty, sealedEmpty))[0]
		Expect(codes(res)).To(Equal([]string{"", ""}))
		Expect(*res.Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "e1", Kind: "events", From: 1, To: 0}))
		Expect(res.Entries[1].Meta.Sealed).To(BeTrue())
		m := mustMeta(b, "e1")
		Expect([]int64{m.Generation, m.HighSeq, m.Total}).To(Equal([]int64{1, 0, 0}))
		Expect(mustMeta(b, "e2").Sealed).To(BeTrue())
	})

	It("declares kinds strictly with a declare-only batch", func() {
		jobs := keyedKind("jobs", recordstore.ConflictReplace)
		declareOnly := func(k recordstore.Kind) recordstore.EntryResult {
			res := mustBatch(b, newBatch([]recordstore.Kind{k}, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: k.Name}))[0]
			Expect(res.Entries).To(HaveLen(1))
			return res.Entries[0]
		}
		Expect(declareOnly(jobs).Status).To(Equal(recordstore.KindCreated))
		Expect(declareOnly(jobs).Status).To(Equal(recordstore.KindUnchanged))
		wider := jobs
		wider.Columns = append(append([]recordstore.Column{}, jobs.Columns...), recordstore.Column{Name: "w", Type: recordstore.TypeNumber})
		Expect(declareOnly(wider).Status).To(Equal(recordstore.KindUpdated))
		// Strict, as DeclareKind: omitting a stored column is a conflict.
		r := declareOnly(jobs)
		Expect(errors.Is(r.Err(), recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", r.Err())
		k, err := b.Kind(ctx, "jobs")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Columns).To(HaveLen(5))
		// A declare entry needs its schema in the batch.
		res := mustBatch(b, newBatch(nil, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "other"}))[0]
		Expect(codes(res)).To(Equal([]string{"invalid"}))
		mustAppend(b, "j", "jobs", recordstore.Row{"id": "a", "w": 1.5})
	})

	It("declares a new kind inside a batch without deadlocking on the single writer", func() {
		fresh := recordstore.Kind{Name: "fresh", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}}
		batch := newBatch([]recordstore.Kind{fresh}, appendEntry("f", fresh, recordstore.Row{"v": "x"}))
		done := make(chan []recordstore.BatchResult, 1)
		go func() {
			defer GinkgoRecover()
			res, err := b.AppendBatch(ctx, batch)
			Expect(err).NotTo(HaveOccurred())
			done <- res
		}()
		var res []recordstore.BatchResult
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(&res))
		Expect(codes(res[0])).To(Equal([]string{""}))
		Expect(values(mustScan(b, "f"), "v")).To(Equal([]any{"x"}))
		mustAppend(b, "f", "fresh", recordstore.Row{"v": "y"})
	})

	It("answers for batches it never saw, and sweeps old ledger rows", func() {
		_, err := b.BatchOutcome(ctx, "never")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		seq, err := b.ProducerSeq(ctx, "p1")
		Expect(err).NotTo(HaveOccurred())
		Expect(seq).To(BeZero())
		n, err := b.SweepBatches(ctx, clk.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
		// The ledger appears with the first batch only.
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM sqlite_master WHERE name = 'record_spool_batches'`)).To(BeZero())

		first := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		mustBatch(b, first)
		clk.Advance(time.Hour)
		second := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "b"}))
		mustBatch(b, second)
		n, err = b.SweepBatches(ctx, clk.Now().Add(-time.Minute))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeEquivalentTo(1))
		_, err = b.BatchOutcome(ctx, first.ID)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		_, err = b.BatchOutcome(ctx, second.ID)
		Expect(err).NotTo(HaveOccurred())
		db := rawDB(b)
		Expect(rawCount(db, `SELECT epoch FROM record_spool_batches WHERE batch_id = ?`, second.ID)).To(Equal(b.Epoch()))
		Expect(rawCount(db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'record_spool_batches'
			AND name IN ('record_spool_batches_producer', 'record_spool_batches_ingested')`)).To(BeEquivalentTo(2))
	})
})
