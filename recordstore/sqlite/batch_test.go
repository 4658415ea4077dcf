// Specs for AppendBatch: exactly once by id, entry isolation, group commit,
// foreign schemas, the generation fence, failed batches and the ledger.

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

	It("applies a batch id once when its producer sends it again under a higher seq, and keeps applying that producer's batches", func() {
		batch := newBatch([]recordstore.Kind{events}, appendEntry("s", events, recordstore.Row{"name": "a"}))
		res := mustBatch(b, batch)
		next := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "b"}))
		Expect(mustBatch(b, next)[0].Outcome).To(Equal(recordstore.OutcomeCommitted))

		// The producer's marks say a seq above theirs is new; the ledger
		// knows better.
		reused := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a again"}))
		reused.ID = batch.ID
		Expect(mustBatch(b, reused)).To(Equal(res), "the recorded result, nothing written")
		Expect(mustMeta(b, "s").Total).To(BeEquivalentTo(2))

		after := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "c"}))
		got := mustBatch(b, after)[0]
		Expect(got.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(*got.Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 3, To: 3, Appended: 1}))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(3))
	})

	It("gives a batch id repeated in one call the first one's result and applies it once", func() {
		batch := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		res := mustBatch(b, batch, batch)
		Expect(res[1]).To(Equal(res[0]))
		Expect(mustMeta(b, "s").Total).To(BeEquivalentTo(1))
	})

	It("isolates entries: a failing one is rolled back with its code, the others commit", func() {
		keyed := keyedKind("kv", recordstore.ConflictSkip)
		declare(b, keyed)
		mustAppend(b, "closed", "events", recordstore.Row{"name": "x"})
		_, err := b.Seal(ctx, "closed")
		Expect(err).NotTo(HaveOccurred())
		mustAppend(b, "gone", "events", recordstore.Row{"name": "x"})

		dup := appendEntry("k", keyed, kv("a", "1", 1, ""), kv("a", "2", 2, ""))
		badRow := appendEntry("s", events, recordstore.Row{"name": "bad"})
		badRow.Rows[0][1] = "not an integer"
		batch := newBatch(nil,
			appendEntry("s", events, recordstore.Row{"name": "a"}),                        // 0 ok
			appendEntry("closed", events, recordstore.Row{"name": "b"}),                   // 1 sealed
			recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "s", Kind: "nokind"}, // 2 not_found
			badRow, // 3 invalid
			dup,    // 4 invalid
			recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "s"},                     // 5 invalid (ttl)
			recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: "closed", Generation: 9}, // 6 not_found
			recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s"},                       // 7 ok
			appendEntry("s", events, recordstore.Row{"name": "c"}),                            // 8 sealed by 7
			recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "gone"},                  // 9 ok
			appendEntry("k", keyed, kv("b", "1", 1, "")),                                      // 10 ok
			recordstore.BatchEntry{Op: "rename", Stream: "s"},                                 // 11 invalid
			appendEntry("a/b", events, recordstore.Row{"name": "d"}),                          // 12 invalid
		)
		res := mustBatch(b, batch)[0]
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(codes(res)).To(Equal([]string{"", "sealed", "not_found", "invalid", "invalid", "invalid",
			"not_found", "", "sealed", "", "", "invalid", "invalid"}))
		Expect(res.Entries[7].Meta.Sealed).To(BeTrue())
		Expect(res.Entries[9].Meta).To(BeNil())
		Expect(errors.Is(res.Entries[1].Err(), recordstore.ErrSealed)).To(BeTrue())

		Expect(values(mustScan(b, "s"), "name")).To(Equal([]any{"a"}))
		Expect(mustMeta(b, "closed").HighSeq).To(BeEquivalentTo(1))
		_, err = b.Meta(ctx, "gone")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		Expect(values(mustScan(b, "k"), "id")).To(Equal([]any{"b"}))
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(res))
	})

	It("commits many batches in one transaction, each with its ledger row, when one entry fails", func() {
		mustAppend(b, "closed", "events", recordstore.Row{"name": "x"})
		_, err := b.Seal(ctx, "closed")
		Expect(err).NotTo(HaveOccurred())
		var batches []recordstore.Batch
		for i := 0; i < 50; i++ {
			stream := fmt.Sprintf("s%d", i%5)
			if i == 17 {
				stream = "closed"
			}
			batches = append(batches, newBatch([]recordstore.Kind{events}, appendEntry(stream, events, recordstore.Row{"n": int64(i)})))
		}
		res := mustBatch(b, batches...)
		for i, r := range res {
			Expect(r.ID).To(Equal(batches[i].ID))
			Expect(r.Outcome).To(Equal(recordstore.OutcomeCommitted))
			if i == 17 {
				Expect(codes(r)).To(Equal([]string{"sealed"}))
			} else {
				Expect(codes(r)).To(Equal([]string{""}))
			}
		}
		// s2 got batches 2, 7, 12, 22, ... (17 went to the sealed stream).
		Expect(mustMeta(b, "s2").Total).To(BeEquivalentTo(9))
		Expect(values(mustScan(b, "s2"), "n")).To(Equal([]any{int64(2), int64(7), int64(12), int64(22), int64(27),
			int64(32), int64(37), int64(42), int64(47)}))
		Expect(mustMeta(b, "closed").HighSeq).To(BeEquivalentTo(1))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(50))
		seq, err := b.ProducerSeq(ctx, "p1")
		Expect(err).NotTo(HaveOccurred())
		Expect(seq).To(Equal(batches[49].Producer.Seq))
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

	DescribeTable("fails the entries of a kind whose batch schema changes more than columns, and changes nothing",
		func(change func(k *recordstore.Kind)) {
			keyed := keyedKind("kv", recordstore.ConflictSkip)
			declare(b, keyed)
			foreign := keyedKind("kv", recordstore.ConflictSkip)
			change(&foreign)
			batch := newBatch([]recordstore.Kind{foreign, events},
				recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "k", Kind: "kv", Rows: []recordstore.Values{{"a", "1", int64(1), ""}}},
				appendEntry("s", events, recordstore.Row{"name": "ok"}))
			res := mustBatch(b, batch)[0]
			Expect(codes(res)).To(Equal([]string{"schema_conflict", ""}))
			stored, err := b.Kind(ctx, "kv")
			Expect(err).NotTo(HaveOccurred())
			want := keyedKind("kv", recordstore.ConflictSkip)
			Expect(want.Validate()).To(Succeed())
			Expect(stored).To(Equal(want))
			_, err = b.Meta(ctx, "k")
			Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
			Expect(mustMeta(b, "s").Total).To(BeEquivalentTo(1))
		},
		Entry("a changed key", func(k *recordstore.Kind) { k.Key = []string{"v"} }),
		Entry("a changed column type", func(k *recordstore.Kind) { k.Columns[1].Type = recordstore.TypeInteger }),
		Entry("a changed conflict policy", func(k *recordstore.Kind) { k.OnConflict = recordstore.ConflictReplace }),
	)

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

	It("fences entries to a generation: after delete and recreate the old one is not found", func() {
		mustAppend(b, "s", "events", recordstore.Row{"name": "gen1"})
		Expect(b.Delete(ctx, "s")).To(Succeed())
		mustAppend(b, "s", "events", recordstore.Row{"name": "gen2"})
		old := appendEntry("s", events, recordstore.Row{"name": "late"})
		old.Generation = 1
		cur := appendEntry("s", events, recordstore.Row{"name": "now"})
		cur.Generation = 2
		res := mustBatch(b, newBatch(nil, old,
			recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s", Generation: 1},
			recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "s", Generation: 1, TTL: time.Hour},
			recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "s", Generation: 1},
			cur,
			recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s", Generation: 2},
		))[0]
		Expect(codes(res)).To(Equal([]string{"not_found", "not_found", "not_found", "not_found", "", ""}))
		Expect(values(mustScan(b, "s"), "name")).To(Equal([]any{"gen2", "now"}))
		m := mustMeta(b, "s")
		Expect(m.Sealed).To(BeTrue())
		Expect(m.ExpiresAt).To(BeNil())
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

	It("records a failed batch without applying its entries, and counts it for its producer", func() {
		batch := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "e00001.ndjson: line 3: not JSON"}
		res := mustBatch(b, batch)[0]
		Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
		Expect(res.Entries).To(BeEmpty())
		Expect(errors.Is(res.Err(), recordstore.ErrInvalid)).To(BeTrue())
		_, err := b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(res))
		Expect(out.Err().Error()).To(Equal("invalid: e00001.ndjson: line 3: not JSON"))
		seq, err := b.ProducerSeq(ctx, "p1")
		Expect(err).NotTo(HaveOccurred())
		Expect(seq).To(Equal(batch.Producer.Seq))
	})

	It("applies a batch recorded as failed again when it is marked Retry, replacing the failure with the outcome", func() {
		batch := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "checksum mismatch"}
		Expect(mustBatch(b, batch)[0].Outcome).To(Equal(recordstore.OutcomeFailed))

		again := batch
		again.Failure = nil
		Expect(mustBatch(b, again)[0].Outcome).To(Equal(recordstore.OutcomeFailed), "without Retry the record stands")
		_, err := b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())

		clk.Advance(time.Minute)
		again.Retry = true
		res := mustBatch(b, again)[0]
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(res.IngestedAt).To(Equal(clk.Now()))
		Expect(*res.Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 1, To: 1, Appended: 1}))
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(res))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(1))

		By("a committed batch is never applied twice, Retry or not")
		Expect(mustBatch(b, again)).To(Equal([]recordstore.BatchResult{res}))
		Expect(mustMeta(b, "s").Total).To(BeEquivalentTo(1))
	})

	It("records the new failure of a retried batch that fails again, and leaves a new batch marked Retry as it is", func() {
		batch := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "first failure"}
		mustBatch(b, batch)
		batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "second failure"}
		batch.Retry = true
		clk.Advance(time.Minute)
		res := mustBatch(b, batch)[0]
		Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
		Expect(res.Err().Error()).To(Equal("invalid: second failure"))
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Err().Error()).To(Equal("invalid: second failure"))
		Expect(out.IngestedAt).To(Equal(clk.Now()))

		fresh := newBatch(nil, appendEntry("t", events, recordstore.Row{"name": "b"}))
		fresh.Retry = true
		Expect(mustBatch(b, fresh)[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(mustMeta(b, "t").Total).To(BeEquivalentTo(1))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(2))
	})

	It("returns results that survive the ledger's JSON exactly", func() {
		mustAppend(b, "t", "events", recordstore.Row{"name": "old"})
		clk.Advance(time.Second)
		cut := clk.Now()
		sealAfter := appendEntry("s", events, recordstore.Row{"name": "a", "ok": true, "at": "2030-01-01T00:00:00.5Z", "doc": map[string]any{"k": []int{1}}})
		sealAfter.Seal = true
		batch := newBatch([]recordstore.Kind{events}, sealAfter,
			recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: "s", Generation: 1},
			recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "s", TTL: time.Hour},
			recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: "t", Before: cut},
			recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "events"},
		)
		res := mustBatch(b, batch)[0]
		Expect(codes(res)).To(Equal([]string{"", "", "", "", ""}))
		Expect(res.Entries[2].Meta.ExpiresAt).NotTo(BeNil())
		Expect(res.Entries[3].Meta.Total).To(BeZero())
		Expect(res.Entries[4].Status).To(Equal(recordstore.KindUnchanged))
		out, err := b.BatchOutcome(ctx, batch.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(res))
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

	It("refuses a batch without an id, writing nothing", func() {
		batch := newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "a"}))
		batch.ID = ""
		_, err := b.AppendBatch(ctx, batch)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		_, err = b.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
	})
})
