// SQLite-specific specs for AppendBatch: the epoch across a reopen, the
// ledger's table and indexes, a kind declared inside a batch on the single
// writer. The BatchAppender contract itself (exactly once, entry results
// and isolation, batch schemas, Failure, Retry, group commit, row sources)
// is the shared suite's, run in conformance_test.go.

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

	It("keeps one ledger row per batch, stamped with the epoch it was applied in, across a reopen that raises the epoch", func() {
		batch := newBatch([]recordstore.Kind{events}, appendEntry("s", events, recordstore.Row{"name": "a"}, recordstore.Row{"name": "b"}))
		res := mustBatch(b, batch)
		Expect(res[0].Epoch).To(Equal(b.Epoch()))

		Expect(b.Close()).To(Succeed())
		b = openAt(path, sqlite.Options{Now: clk.Now})
		Expect(b.Epoch()).To(BeNumerically(">", res[0].Epoch))
		Expect(mustBatch(b, batch)).To(Equal(res))
		db := rawDB(b)
		Expect(rawCount(db, `SELECT count(*) FROM record_spool_batches`)).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT epoch FROM record_spool_batches WHERE batch_id = ?`, batch.ID)).To(Equal(res[0].Epoch))
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
