// Specs for group commit: a group of batches applied in one transaction
// gives exactly the results and the store that applying them one call
// (one transaction) at a time gives, whatever they mix.

package sqlite_test

import (
	"database/sql"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// storeState is everything a spec compares between two stores: every
// stream's meta and rows, and the append windows Trim and retention go by.
type storeState struct {
	Metas   []recordstore.Meta
	Rows    map[string][]recordstore.Record
	Windows []string
}

func stateOf(b *sqlite.Backend) storeState {
	metas, err := b.Streams(ctx, "")
	Expect(err).NotTo(HaveOccurred())
	st := storeState{Metas: metas, Rows: map[string][]recordstore.Record{}}
	for _, m := range metas {
		st.Rows[m.Stream] = mustScan(b, m.Stream)
	}
	st.Windows = windows(rawDB(b))
	return st
}

// windows lists the seqs record_appends covers per stream, generation and
// append time, contiguous windows merged (one append window or several
// contiguous ones of the same time cover the same seqs for Trim).
func windows(db *sql.DB) []string {
	rows, err := db.Query(`SELECT s.id, a.generation, a.appended_at, a.from_seq, a.to_seq FROM record_appends a
		JOIN record_streams s ON s.no = a.stream ORDER BY s.id, a.generation, a.appended_at, a.from_seq`)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	type window struct {
		key      string
		from, to int64
	}
	var all []window
	for rows.Next() {
		var id, at string
		var gen, from, to int64
		Expect(rows.Scan(&id, &gen, &at, &from, &to)).To(Succeed())
		key := fmt.Sprintf("%s/%d@%s", id, gen, at)
		if n := len(all); n > 0 && all[n-1].key == key && all[n-1].to+1 == from {
			all[n-1].to = to
			continue
		}
		all = append(all, window{key, from, to})
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	out := make([]string, len(all))
	for i, w := range all {
		out[i] = fmt.Sprintf("%s:%d-%d", w.key, w.from, w.to)
	}
	return out
}

var _ = Describe("group commit", func() {
	It("gives the results and the store that one transaction per batch gives", func() {
		clk := newClock()
		group := openAt(storePath(), sqlite.Options{Now: clk.Now})
		each := openAt(storePath(), sqlite.Options{Now: clk.Now})
		events := eventsKind()
		replace := keyedKind("rep", recordstore.ConflictReplace)
		retained := eventsKind()
		retained.Name = "retained"
		retained.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)}
		for _, b := range []*sqlite.Backend{group, each} {
			declare(b, events)
			declare(b, replace)
			declare(b, retained)
			mustAppend(b, "old", "events", recordstore.Row{"name": "before"})
			mustAppend(b, "ret", "retained", recordstore.Row{"name": "before"})
		}
		clk.Advance(2 * time.Hour) // the rows of "ret" are past retention now

		// 300 rows: normalized in the background; the last one is bad, so
		// the entry fails after its first rows were inserted.
		var many []recordstore.Row
		for i := 0; i < 300; i++ {
			many = append(many, recordstore.Row{"name": fmt.Sprint(i), "n": int64(i)})
		}
		big := appendEntry("a", events, many...)
		bad := appendEntry("a", events, many...)
		bad.Rows[299] = recordstore.Values{int64(1), nil, nil, nil, nil, nil}
		sealA := appendEntry("c", events, recordstore.Row{"name": "last"})
		sealA.Seal = true
		fenced := appendEntry("a", events, recordstore.Row{"name": "fenced"})
		fenced.Generation = 2 // "a" is at generation 1: refused after its pending state was written

		var batches []recordstore.Batch
		add := func(entries ...recordstore.BatchEntry) {
			batches = append(batches, newBatch([]recordstore.Kind{events, replace, retained}, entries...))
		}
		add(appendEntry("a", events, recordstore.Row{"name": "a1"}))
		add(appendEntry("a", events, recordstore.Row{"name": "a2"}), appendEntry("b", events, recordstore.Row{"name": "b1"}))
		add(bad)
		add(appendEntry("a", events, recordstore.Row{"name": "a3"}), big)
		add(appendEntry("a", replace, kv("k", "x", 1, "")))
		add(appendEntry("r", replace, kv("k", "1", 1, ""), kv("j", "1", 1, "")))
		add(appendEntry("r", replace, kv("k", "2", 2, "")))
		add(recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: "old", Before: clk.Now().Add(time.Second)})
		add(appendEntry("old", events, recordstore.Row{"name": "after trim"}))
		add(appendEntry("c", events, recordstore.Row{"name": "c1"}), sealA, appendEntry("c", events, recordstore.Row{"name": "sealed"}))
		add(recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "b"}, appendEntry("b", events, recordstore.Row{"name": "b gen2"}))
		add(appendEntry("b", events, recordstore.Row{"name": "b gen2 again"}), fenced)
		add(appendEntry("ret", retained, recordstore.Row{"name": "r1"}))
		add(appendEntry("ret", retained, recordstore.Row{"name": "r2"}))
		add(recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "a", TTL: time.Minute}, appendEntry("a", events, recordstore.Row{"name": "a4"}))
		failed := newBatch(nil, appendEntry("a", events, recordstore.Row{"name": "never"}))
		failed.Failure = &recordstore.BatchError{Code: "invalid", Message: "bad batch"}
		batches = append(batches, failed)
		add(appendEntry("a", events, recordstore.Row{"name": "a5"}))

		together := mustBatch(group, batches...)
		var apart []recordstore.BatchResult
		for _, batch := range batches {
			apart = append(apart, mustBatch(each, batch)...)
		}
		Expect(together).To(Equal(apart))
		// The mix did exercise every path.
		Expect(codes(together[2])).To(Equal([]string{"invalid"}))
		Expect(codes(together[4])).To(Equal([]string{"schema_conflict"}))
		Expect(codes(together[9])).To(Equal([]string{"", "", "sealed"}))
		Expect(codes(together[11])).To(Equal([]string{"", "not_found"}))
		Expect(together[6].Entries[0].Append.Replaced).To(BeEquivalentTo(1))
		Expect(stateOf(group)).To(Equal(stateOf(each)))
		Expect(values(mustScan(group, "ret"), "name")).To(Equal([]any{"r1", "r2"}))

		// And Trim still finds every row of the group's appends.
		for _, b := range []*sqlite.Backend{group, each} {
			m, err := b.Trim(ctx, "a", clk.Now().Add(time.Second))
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Total).To(BeZero())
			Expect(m.LowSeq).To(Equal(m.HighSeq + 1))
		}
	})
})
