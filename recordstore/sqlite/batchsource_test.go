// Specs for entries whose rows stream from a recordstore.RowSource: the
// rows land as Rows would, bad data fails the whole batch (and only that
// batch of the group), and a source's I/O error fails the call.

package sqlite_test

import (
	"errors"
	"fmt"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// sliceSource yields vals; announce overrides Len when not negative, and
// failAt (when >= 0) makes Next return failErr instead of row failAt.
type sliceSource struct {
	vals     []recordstore.Values
	announce int
	failAt   int
	failErr  error
	next     int
	reads    int
}

func newSource(vals []recordstore.Values) *sliceSource {
	return &sliceSource{vals: vals, announce: -1, failAt: -1}
}

func (s *sliceSource) Len() int {
	if s.announce >= 0 {
		return s.announce
	}
	return len(s.vals)
}

func (s *sliceSource) Next() (recordstore.Values, error) {
	s.reads++
	if s.next == s.failAt {
		return nil, s.failErr
	}
	if s.next >= len(s.vals) {
		return nil, io.EOF
	}
	s.next++
	return s.vals[s.next-1], nil
}

// numbered returns n events rows named r0, r1, ...
func numbered(k recordstore.Kind, n int) []recordstore.Values {
	rows := make([]recordstore.Row, n)
	for i := range rows {
		rows[i] = recordstore.Row{"name": fmt.Sprintf("r%d", i), "n": i}
	}
	return normalized(k, rows...)
}

func sourceEntry(stream string, k recordstore.Kind, src recordstore.RowSource) recordstore.BatchEntry {
	return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Source: src}
}

var _ = Describe("AppendBatch with row sources", func() {
	var (
		b      *sqlite.Backend
		events recordstore.Kind
	)
	BeforeEach(func() {
		b = openAt(storePath(), sqlite.Options{})
		events = eventsKind()
		declare(b, events)
	})

	DescribeTable("stores streamed rows exactly as the same Rows",
		func(n int) {
			vals := numbered(events, n)
			src := newSource(vals)
			res := mustBatch(b,
				newBatch([]recordstore.Kind{events}, sourceEntry("streamed", events, src)),
				newBatch([]recordstore.Kind{events}, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "plain", Kind: events.Name, Rows: vals}))
			Expect(res[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
			Expect(res[0].Err()).NotTo(HaveOccurred())
			Expect(res[0].Entries[0].Append.Appended).To(BeEquivalentTo(n))
			Expect(src.reads).To(Equal(n+1), "every row, then the end")
			streamed, plain := mustScan(b, "streamed"), mustScan(b, "plain")
			Expect(streamed).To(HaveLen(n))
			for i := range streamed {
				Expect(streamed[i].Values).To(Equal(plain[i].Values))
			}
		},
		Entry("no rows", 0),
		Entry("a few rows (read before inserting)", 3),
		Entry("many rows (read while inserting)", 5000),
	)

	DescribeTable("fails the whole batch on bad data, and only that batch of the group",
		func(n int, spoil func(*sliceSource), code string) {
			good := newBatch([]recordstore.Kind{events}, appendEntry("other", events, recordstore.Row{"name": "kept"}))
			src := newSource(numbered(events, n))
			spoil(src)
			bad := newBatch([]recordstore.Kind{events},
				appendEntry("first", events, recordstore.Row{"name": "rolled back"}),
				sourceEntry("second", events, src))
			after := newBatch([]recordstore.Kind{events}, appendEntry("first", events, recordstore.Row{"name": "after"}))
			res := mustBatch(b, good, bad, after)

			Expect(res[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
			Expect(res[1].Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(res[1].Error).NotTo(BeNil())
			Expect(res[1].Error.Code).To(Equal(code))
			Expect(res[1].Entries).To(BeEmpty())
			Expect(res[2].Outcome).To(Equal(recordstore.OutcomeCommitted))
			Expect(*res[2].Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "first", Kind: "events", From: 1, To: 1, Appended: 1}),
				"the failed batch's first entry left no trace, not even in the stream's seqs")

			Expect(mustScan(b, "other")).To(HaveLen(1))
			recs := mustScan(b, "first")
			Expect(recs).To(HaveLen(1))
			Expect(recs[0].Values["name"]).To(Equal("after"))
			_, err := b.Meta(ctx, "second")
			Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)

			out, err := b.BatchOutcome(ctx, bad.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(Equal(res[1]))
			again := mustBatch(b, bad)
			Expect(again[0]).To(Equal(res[1]), "a replay returns the recorded failure")
		},
		Entry("an invalid row midway (many rows)", 2000, func(s *sliceSource) {
			s.failAt, s.failErr = 1500, recordstore.Invalidf("row 1500 does not fit")
		}, "invalid"),
		Entry("an invalid row (few rows)", 3, func(s *sliceSource) {
			s.failAt, s.failErr = 1, recordstore.Invalidf("row 1 does not fit")
		}, "invalid"),
		Entry("fewer rows than announced", 1000, func(s *sliceSource) { s.announce = 1200 }, "invalid"),
		Entry("more rows than announced", 1000, func(s *sliceSource) { s.announce = 999 }, "invalid"),
		Entry("rows announced, none there", 0, func(s *sliceSource) { s.announce = 5 }, "invalid"),
		Entry("an error at the end", 300, func(s *sliceSource) {
			s.failAt, s.failErr = 300, recordstore.Invalidf("row count mismatch at the end")
		}, "invalid"),
	)

	It("fails the call, committing nothing and keeping the writer, when a source cannot be read", func() {
		src := newSource(numbered(events, 1000))
		src.failAt, src.failErr = 700, errors.New("read error: input/output error")
		good := newBatch([]recordstore.Kind{events}, appendEntry("other", events, recordstore.Row{"name": "x"}))
		bad := newBatch([]recordstore.Kind{events}, sourceEntry("second", events, src))
		_, err := b.AppendBatch(ctx, good, bad)
		Expect(err).To(MatchError(ContainSubstring("input/output error")))
		_, err = b.Meta(ctx, "other")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "nothing of the group was committed: %v", err)
		_, err = b.BatchOutcome(ctx, good.ID)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())

		res := mustBatch(b, good)
		Expect(res[0].Outcome).To(Equal(recordstore.OutcomeCommitted), "the writer still works")
	})

	It("leaves the source of an entry refused before its rows unread", func() {
		src := newSource(numbered(events, 10))
		batch := newBatch([]recordstore.Kind{events},
			recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "s", Kind: events.Name, Generation: 7, Source: src})
		res := mustBatch(b, batch)
		Expect(res[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(codes(res[0])).To(Equal([]string{"not_found"}))
		Expect(src.reads).To(BeZero())
	})
})
