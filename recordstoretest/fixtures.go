// Fixtures and helpers shared by the specs: the suite's kinds, checked
// shorthands for common calls, whole-store snapshots and the invariants
// checked after every spec.

package recordstoretest

import (
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// The suite's kinds. Each call returns a fresh value.

// eventKind has no key: every row is appended.
func eventKind() recordstore.Kind {
	return recordstore.Kind{Name: "event", Columns: []recordstore.Column{
		{Name: "n", Type: recordstore.TypeInteger, Required: true},
		{Name: "msg", Type: recordstore.TypeString},
	}}
}

// widenedEventKind is eventKind with one more column.
func widenedEventKind() recordstore.Kind {
	k := eventKind()
	k.Columns = append(k.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
	return k
}

// withSchema returns schemas with k in place of the schema of its name,
// or added when there is none.
func withSchema(schemas []recordstore.Kind, k recordstore.Kind) []recordstore.Kind {
	out := slices.Clone(schemas)
	for i := range out {
		if out[i].Name == k.Name {
			out[i] = k
			return out
		}
	}
	return append(out, k)
}

// itemKind is keyed by id, with conflict policy p.
func itemKind(p recordstore.OnConflict) recordstore.Kind {
	return recordstore.Kind{Name: "item_" + string(p), Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "v", Type: recordstore.TypeInteger},
		{Name: "note", Type: recordstore.TypeString},
	}, Key: []string{"id"}, OnConflict: p}
}

// lwwKind is keyed by id; the greater ver wins, ties go to the smaller node.
func lwwKind() recordstore.Kind {
	return recordstore.Kind{Name: "item_lww", Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "ver", Type: recordstore.TypeInteger},
		{Name: "node", Type: recordstore.TypeString},
		{Name: "v", Type: recordstore.TypeInteger},
	}, Key: []string{"id"}, OnConflict: recordstore.ConflictLWW,
		LWW: &recordstore.LWW{Version: "ver", Tiebreak: "node"}}
}

// allTypesKind has one nullable column of every type.
func allTypesKind() recordstore.Kind {
	return recordstore.Kind{Name: "all_types", Columns: []recordstore.Column{
		{Name: "s", Type: recordstore.TypeString},
		{Name: "i", Type: recordstore.TypeInteger},
		{Name: "f", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "t", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
	}}
}

// retainedKind is an unkeyed kind with retention mode and ttl.
func retainedKind(name string, mode recordstore.RetentionMode, ttl time.Duration) recordstore.Kind {
	return recordstore.Kind{Name: name, Columns: []recordstore.Column{
		{Name: "n", Type: recordstore.TypeInteger, Required: true},
	}, Retention: &recordstore.Retention{Mode: mode, TTL: recordstore.Duration(ttl)}}
}

// declare declares kinds that must be new (bound by the harness's Bind
// when it has one: see bindDeclared).
func (s *suite) declare(kinds ...recordstore.Kind) {
	for _, k := range kinds {
		k = s.bindDeclared(k)
		st, err := s.b.DeclareKind(s.ctx, k)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "declare kind %s", k.Name)
		ExpectWithOffset(1, st).To(Equal(recordstore.KindCreated), "declare kind %s", k.Name)
	}
}

// append appends rows that must be accepted. When the suite binds its
// kinds, kind is one of the suite's kinds, and the rows go to the kind of
// stream (see ensureKind), declared first.
func (s *suite) append(stream, kind string, rows ...recordstore.Row) recordstore.AppendResult {
	kind = s.ensureKind(kind, stream)
	res, err := s.b.Append(s.ctx, stream, kind, rows)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "append %d rows of %s to %s", len(rows), kind, stream)
	return res
}

// events returns n event rows numbered from first.
func events(first, n int) []recordstore.Row {
	rows := make([]recordstore.Row, n)
	for i := range rows {
		rows[i] = recordstore.Row{"n": int64(first + i), "msg": fmt.Sprintf("event %d", first+i)}
	}
	return rows
}

// meta returns the meta of a stream that must exist.
func (s *suite) meta(stream string) recordstore.Meta {
	m, err := s.b.Meta(s.ctx, stream)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "meta of %s", stream)
	return m
}

// scan returns every row of a stream that must exist.
func (s *suite) scan(stream string) []recordstore.Record {
	recs, err := s.b.Scan(s.ctx, stream, recordstore.ScanOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "scan %s", stream)
	return recs
}

// seqs lists the seqs of recs.
func seqs(recs []recordstore.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// column lists the value of one column in each of recs.
func column(recs []recordstore.Record, name string) []any {
	out := make([]any, len(recs))
	for i, r := range recs {
		out[i] = r.Values[name]
	}
	return out
}

// seqRange returns from..to inclusive.
func seqRange(from, to int64) []int64 {
	out := []int64{}
	for q := from; q <= to; q++ {
		out = append(out, q)
	}
	return out
}

// expectRefused checks that err wraps sentinel and has code.
func expectRefused(err, sentinel error, code string) {
	ExpectWithOffset(1, err).To(MatchError(sentinel), "want %s", code)
	ExpectWithOffset(1, recordstore.Code(err)).To(Equal(code), "code of %v", err)
}

// expectNotFound checks that err is ErrNotFound.
func expectNotFound(err error) {
	ExpectWithOffset(1, err).To(MatchError(recordstore.ErrNotFound))
	ExpectWithOffset(1, recordstore.Code(err)).To(Equal("not_found"))
}

// storeSnapshot is everything a reader can see in a store, as text so that
// a difference prints legibly.
type storeSnapshot struct {
	Kinds   []string
	Streams []string          // Meta JSON, by stream id
	Rows    map[string]string // stream id → its records as JSON
}

// snapshot reads the whole store.
func (s *suite) snapshot() storeSnapshot {
	return takeSnapshot(s.ctx, s.b)
}

// expectUnchanged checks that the store still reads as before.
func (s *suite) expectUnchanged(before storeSnapshot) {
	ExpectWithOffset(1, s.snapshot()).To(Equal(before), "the store changed")
}

// expectMeta checks that got reads exactly as want (times compared at
// microsecond precision, in UTC).
func expectMeta(got, want recordstore.Meta) {
	ExpectWithOffset(1, jsonText(got)).To(Equal(jsonText(want)))
}

// at returns a pointer to t, for Meta.ExpiresAt.
func at(t time.Time) *time.Time { return &t }

// checkInvariants verifies every live stream's Meta against its rows: seqs
// strictly increase inside [LowSeq, HighSeq], Total counts them, LowSeq is
// the first stored seq (HighSeq+1 when none), Generation is at least 1, and
// Streams and Meta agree.
func (s *suite) checkInvariants() {
	metas, err := s.b.Streams(s.ctx, "")
	Expect(err).NotTo(HaveOccurred(), "invariants: list streams")
	for _, m := range metas {
		Expect(s.meta(m.Stream)).To(Equal(m), "invariants: Meta and Streams disagree on %s", m.Stream)
		recs := s.scan(m.Stream)
		Expect(m.Generation).To(BeNumerically(">=", 1), "invariants: generation of %s", m.Stream)
		Expect(m.Total).To(BeEquivalentTo(len(recs)), "invariants: total of %s", m.Stream)
		low := m.HighSeq + 1
		if len(recs) > 0 {
			low = recs[0].Seq
		}
		Expect(m.LowSeq).To(Equal(low), "invariants: lowSeq of %s", m.Stream)
		prev := int64(0)
		for _, r := range recs {
			Expect(r.Seq).To(BeNumerically(">", prev), "invariants: seq order in %s", m.Stream)
			Expect(r.Seq).To(BeNumerically("<=", m.HighSeq), "invariants: seq beyond highSeq in %s", m.Stream)
			prev = r.Seq
		}
	}
}
