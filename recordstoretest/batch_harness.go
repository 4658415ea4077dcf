// BatchHarness and DescribeBatchAppender: how a backend that applies
// batches exactly once (recordstore.BatchAppender) plugs into the batch
// conformance suite, and the helpers its specs share.

package recordstoretest

import (
	"context"
	"fmt"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// BatchHarness tells the batch suite how to open the backend under test.
type BatchHarness struct {
	// Open returns a fresh, empty backend that implements
	// recordstore.BatchAppender and whose only time source is clock (the
	// ledger's IngestedAt included), with background retention off, as
	// Harness.Open. The suite closes it. Specs that compare two stores
	// call it twice in one spec.
	Open func(ctx context.Context, clock *Clock) (recordstore.Backend, error)

	// Reopen, when set, closes b and opens the same store again with the
	// same clock, as Harness.Reopen. The specs about what the ledger keeps
	// across a reopen are skipped when it is nil.
	Reopen func(ctx context.Context, clock *Clock, b recordstore.Backend) (recordstore.Backend, error)

	// Epoch, when set, returns the epoch of b's writer; the suite then
	// checks that a batch b applies carries it (BatchResult.Epoch). A
	// replayed batch always carries the epoch it was applied with, which
	// the suite checks either way.
	Epoch func(b recordstore.Backend) int64

	// Bind, when set, makes the suite run on bound kinds: every kind a
	// spec declares is passed through Bind, which must return it bound to
	// a table (recordstore.Kind.Table) of the kind's name — BindTable does
	// so for a backend that speaks SQLite's DDL; the suite expects its
	// tables never to reuse an id, as BindTable's AUTOINCREMENT tables.
	// A bound kind holds one stream, so the suite then gives every stream
	// but a kind's first one a kind of its own, named after the kind and
	// the stream (event_b for the event rows of stream b), declared by
	// the batches that write it, and skips, with a message naming the
	// rule, the specs that bound kinds cannot meet (a kind widened by a
	// batch's schema).
	Bind func(k recordstore.Kind) recordstore.Kind
}

// DescribeBatchAppender registers the batch conformance suite for one
// backend under a ginkgo Describe named name, and returns true so that it
// can be called at package level:
//
//	var _ = recordstoretest.DescribeBatchAppender("mybackend batches", harness)
//
// The caller's test package runs it with RunSpecs. It states the
// exactly-once contract of recordstore.BatchAppender: the ledger, entry
// isolation, Failure and Retry, group commit, row sources, producer seqs.
func DescribeBatchAppender(name string, h BatchHarness) bool {
	if h.Open == nil {
		panic("recordstoretest: BatchHarness.Open is nil")
	}
	return Describe(name, func() {
		s := &batchSuite{suite: &suite{h: Harness{Open: h.Open, Reopen: h.Reopen}, bind: h.Bind}, bh: h}
		BeforeEach(s.setUp)
		BeforeEach(func() {
			if !s.bound() { // bound, each stream's kind is declared by the batches that write it
				s.declare(eventKind(), itemKind(recordstore.ConflictSkip))
			}
		})
		s.describeBatchOnce()
		s.describeBatchLedger()
		s.describeBatchEntries()
		s.describeBatchFailures()
		s.describeBatchGroups()
		s.describeBatchSources()
	})
}

// batchSuite is the state of a batch spec: the backend suite's state (a
// fresh backend and its clock) and a counter for batch ids.
type batchSuite struct {
	*suite
	bh   BatchHarness
	next int64 // the last producer seq handed out by newBatch
}

// producer is the instance newBatch stamps on its batches.
const producer = "0123456789abcdef"

// appender returns the backend under test as a BatchAppender.
func (s *batchSuite) appender() recordstore.BatchAppender {
	ba, ok := s.b.(recordstore.BatchAppender)
	ExpectWithOffset(1, ok).To(BeTrue(), "%T does not implement recordstore.BatchAppender", s.b)
	return ba
}

// newBatch returns a batch of producer with a fresh id and the next seq,
// declaring the suite's event and item_skip kinds (bound, the kinds its
// entries write with: see schemasOf).
func (s *batchSuite) newBatch(entries ...recordstore.BatchEntry) recordstore.Batch {
	s.next++
	schemas := []recordstore.Kind{eventKind(), itemKind(recordstore.ConflictSkip)}
	if s.bound() {
		schemas = s.schemasOf(entries)
	}
	return recordstore.Batch{
		ID:       fmt.Sprintf("batch-%06d", s.next),
		Producer: recordstore.Producer{Instance: producer, Seq: s.next},
		Created:  s.clock.Now(),
		Schemas:  schemas,
		Entries:  entries,
	}
}

// declareKindsOf declares, when the suite binds its kinds, the kinds the
// batches' entries write with (created, or already there), as the suite
// declares its kinds before every spec when it does not: for the specs
// that snapshot the store before a batch that declares nothing new.
func (s *batchSuite) declareKindsOf(batches ...recordstore.Batch) {
	if !s.bound() {
		return
	}
	for _, batch := range batches {
		for _, k := range s.schemasOf(batch.Entries) {
			st, err := s.b.DeclareKind(s.ctx, k)
			ExpectWithOffset(1, err).NotTo(HaveOccurred(), "declare kind %s", k.Name)
			ExpectWithOffset(1, st).To(BeElementOf(recordstore.KindCreated, recordstore.KindUnchanged), "declare kind %s", k.Name)
		}
	}
}

// ev is the name of the kind of the event rows of stream (see kindName).
func (s *batchSuite) ev(stream string) string { return s.kindName("event", stream) }

// apply applies batches in one call that must succeed, and checks that
// each result names its batch.
func (s *batchSuite) apply(batches ...recordstore.Batch) []recordstore.BatchResult {
	res, err := s.appender().AppendBatch(s.ctx, batches...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "append %d batches", len(batches))
	ExpectWithOffset(1, res).To(HaveLen(len(batches)), "one result per batch")
	for i := range res {
		ExpectWithOffset(1, res[i].ID).To(Equal(batches[i].ID), "result %d names its batch", i)
	}
	return res
}

// applyOne applies one batch and returns its result.
func (s *batchSuite) applyOne(batch recordstore.Batch) recordstore.BatchResult {
	return s.apply(batch)[0]
}

// outcome returns the ledger's record of a batch that must be there.
func (s *batchSuite) outcome(id string) recordstore.BatchResult {
	res, err := s.appender().BatchOutcome(s.ctx, id)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "outcome of %s", id)
	return res
}

// expectNoOutcome checks that the ledger has no record of id.
func (s *batchSuite) expectNoOutcome(id string) {
	_, err := s.appender().BatchOutcome(s.ctx, id)
	ExpectWithOffset(1, err).To(MatchError(recordstore.ErrNotFound), "no record of %s", id)
}

// producerSeq returns the ledger's highest seq of instance.
func (s *batchSuite) producerSeq(instance string) int64 {
	seq, err := s.appender().ProducerSeq(s.ctx, instance)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "producer seq of %s", instance)
	return seq
}

// expectCommitted checks that res is a committed batch of the clock's
// current time, of this writer's epoch when the harness knows it.
func (s *batchSuite) expectCommitted(res recordstore.BatchResult) {
	ExpectWithOffset(1, res.Outcome).To(Equal(recordstore.OutcomeCommitted), "outcome of %s: %v", res.ID, res.Err())
	ExpectWithOffset(1, res.Error).To(BeNil())
	ExpectWithOffset(1, res.IngestedAt).To(BeTemporally("==", s.clock.Now()), "ingestedAt of %s", res.ID)
	if s.bh.Epoch != nil {
		ExpectWithOffset(1, res.Epoch).To(Equal(s.bh.Epoch(s.b)), "epoch of %s", res.ID)
	}
}

// appendEntry is an append of rows of k (normalized against k) to stream,
// with the kind of stream in place of k when the suite binds its kinds (k
// is then one of the suite's kinds, or one with the name of one).
func (s *batchSuite) appendEntry(stream string, k recordstore.Kind, rows ...recordstore.Row) recordstore.BatchEntry {
	return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: s.kindAt(k.Name, stream), Rows: normalized(k, rows...)}
}

// eventEntry appends n event rows numbered from first to stream.
func (s *batchSuite) eventEntry(stream string, first, n int) recordstore.BatchEntry {
	return s.appendEntry(stream, eventKind(), events(first, n)...)
}

// normalized turns rows into values in k's column order.
func normalized(k recordstore.Kind, rows ...recordstore.Row) []recordstore.Values {
	out := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		ExpectWithOffset(2, err).NotTo(HaveOccurred(), "normalize a row of %s", k.Name)
		out[i] = v
	}
	return out
}

// appendOf returns an entry's append result, which must be there.
func appendOf(r recordstore.EntryResult) recordstore.AppendResult {
	ExpectWithOffset(1, r.Append).NotTo(BeNil(), "the append result of a %s entry of %s (error %v)", r.Op, r.Stream, r.Err())
	return *r.Append
}

// metaOf returns an entry's stream meta, which must be there.
func metaOf(r recordstore.EntryResult) recordstore.Meta {
	ExpectWithOffset(1, r.Meta).NotTo(BeNil(), "the meta of a %s entry of %s (error %v)", r.Op, r.Stream, r.Err())
	return *r.Meta
}

// entryCodes lists the error code of every entry ("" when it applied).
func entryCodes(res recordstore.BatchResult) []string {
	out := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = recordstore.Code(e.Err())
	}
	return out
}

// withoutEpochs returns res with the one field two stores may differ in
// (the epoch) cleared, to compare the results of two stores.
func withoutEpochs(res []recordstore.BatchResult) []recordstore.BatchResult {
	out := make([]recordstore.BatchResult, len(res))
	for i, r := range res {
		r.Epoch = 0
		out[i] = r
	}
	return out
}

// rowSource is a recordstore.RowSource over vals that counts its reads.
// announce overrides Len when not negative; failAt (when not negative)
// makes Next return failErr instead of row failAt.
type rowSource struct {
	vals     []recordstore.Values
	announce int
	failAt   int
	failErr  error
	next     int
	reads    int
}

func newRowSource(vals []recordstore.Values) *rowSource {
	return &rowSource{vals: vals, announce: -1, failAt: -1}
}

// Len returns the announced row count.
func (r *rowSource) Len() int {
	if r.announce >= 0 {
		return r.announce
	}
	return len(r.vals)
}

// Next returns the next row, failErr at failAt, io.EOF after the last.
func (r *rowSource) Next() (recordstore.Values, error) {
	r.reads++
	if r.next == r.failAt {
		return nil, r.failErr
	}
	if r.next >= len(r.vals) {
		return nil, io.EOF
	}
	r.next++
	return r.vals[r.next-1], nil
}

// sourceEntry appends the rows of src, of the event kind, to stream.
func (s *batchSuite) sourceEntry(stream string, src recordstore.RowSource) recordstore.BatchEntry {
	return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: s.kindAt("event", stream), Source: src}
}
