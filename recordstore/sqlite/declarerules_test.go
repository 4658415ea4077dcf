// Specs for the declaration rules as the SQLite backend meets them: a kind
// at every limit works end to end, a kind past one is refused with
// ErrInvalid by DeclareKind and by a batch's declare entry (never as an
// internal SQLite error), and a kind an earlier build stored under looser
// rules still loads.

package sqlite_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// widestKind has MaxColumns string columns (c0...), the first
// MaxKeyColumns of them the key, MaxIndexes indexes (the first one of
// every column) and, with lww, the last two columns as version and
// tiebreak.
func widestKind(policy recordstore.OnConflict) recordstore.Kind {
	k := recordstore.Kind{Name: "wide", OnConflict: policy}
	for i := 0; i < recordstore.MaxColumns; i++ {
		k.Columns = append(k.Columns, recordstore.Column{Name: fmt.Sprintf("c%d", i), Type: recordstore.TypeString})
	}
	for i := 0; i < recordstore.MaxKeyColumns; i++ {
		k.Key = append(k.Key, k.Columns[i].Name)
	}
	all := make([]string, len(k.Columns))
	for i, c := range k.Columns {
		all[i] = c.Name
	}
	k.Indexes = [][]string{all}
	for i := 1; i < recordstore.MaxIndexes; i++ {
		k.Indexes = append(k.Indexes, []string{all[len(all)-i]})
	}
	if policy == recordstore.ConflictLWW {
		k.LWW = &recordstore.LWW{Version: all[len(all)-2], Tiebreak: all[len(all)-1]}
	}
	return k
}

// wideRow is a row of widestKind: every column "v", the version and
// tiebreak as given.
func wideRow(k recordstore.Kind, version, tiebreak string) recordstore.Row {
	r := recordstore.Row{}
	for _, c := range k.Columns {
		r[c.Name] = "v"
	}
	r[k.Columns[len(k.Columns)-2].Name] = version
	r[k.Columns[len(k.Columns)-1].Name] = tiebreak
	return r
}

var _ = Describe("declaration rules in the SQLite backend", func() {
	DescribeTable("a kind at every limit declares, takes rows and resolves a repeated key",
		func(policy recordstore.OnConflict, wantSeqs []int64) {
			b := openStore(newClock())
			k := widestKind(policy)
			Expect(declare(b, k)).To(Equal(recordstore.KindCreated))
			mustAppend(b, "s", "wide", wideRow(k, "1", "b"))
			mustAppend(b, "s", "wide", wideRow(k, "2", "a"))
			Expect(seqs(mustScan(b, "s"))).To(Equal(wantSeqs))
			Expect(rawCount(rawDB(b), `SELECT count(*) FROM pragma_index_list('wide')`)).To(BeEquivalentTo(recordstore.MaxIndexes + 2))
		},
		Entry("skip", recordstore.ConflictSkip, []int64{1}),
		Entry("replace", recordstore.ConflictReplace, []int64{2}),
		Entry("lww", recordstore.ConflictLWW, []int64{2}),
	)

	It("refuses a kind with more columns than SQLite allows, and creates nothing", func() {
		b := openStore(newClock())
		k := widestKind(recordstore.ConflictSkip)
		k.Columns = append(k.Columns, recordstore.Column{Name: "one_more", Type: recordstore.TypeString})
		_, err := b.DeclareKind(ctx, k)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("1999 columns: a kind has at most 1998 columns"))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM sqlite_master WHERE name LIKE 'wide%'`)).To(BeZero())
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_kinds`)).To(BeZero())
	})

	It("refuses columns added past the limit, and leaves the table as it was", func() {
		b := openStore(newClock())
		k := widestKind(recordstore.ConflictSkip)
		k.Columns = k.Columns[:recordstore.MaxColumns-1]
		k.Indexes = nil
		declare(b, k)
		k.Columns = append(k.Columns, recordstore.Column{Name: "x1", Type: recordstore.TypeString})
		Expect(declare(b, k)).To(Equal(recordstore.KindUpdated))
		k.Columns = append(k.Columns, recordstore.Column{Name: "x2", Type: recordstore.TypeString})
		_, err := b.DeclareKind(ctx, k)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM pragma_table_info('wide')`)).To(BeEquivalentTo(recordstore.MaxColumns + 2))
	})

	DescribeTable("a batch's declare entry of a kind past a rule fails that entry with invalid, never internal",
		func(mutate func(*recordstore.Kind)) {
			b := openStore(newClock())
			k := widestKind(recordstore.ConflictLWW)
			mutate(&k)
			res := mustBatch(b, newBatch([]recordstore.Kind{k}, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: k.Name}))
			Expect(codes(res[0])).To(Equal([]string{"invalid"}))
			Expect(rawCount(rawDB(b), `SELECT count(*) FROM record_kinds`)).To(BeZero())
		},
		Entry("a column more than SQLite allows", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "one_more", Type: recordstore.TypeString})
		}),
		Entry("a key column more than the limit", func(k *recordstore.Kind) { k.Key = append(k.Key, "c600") }),
		Entry("an index more than the limit", func(k *recordstore.Kind) { k.Indexes = append(k.Indexes, []string{"c700"}) }),
		Entry("a json key column", func(k *recordstore.Kind) { k.Columns[0].Type = recordstore.TypeJSON }),
		Entry("an lww version that is a key column", func(k *recordstore.Kind) { k.LWW.Version = "c0" }),
		Entry("a ttl below one second", func(k *recordstore.Kind) {
			k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(86400)}
		}),
	)

	It("creates a repeated index once", func() {
		b := openStore(newClock())
		k := keyedKind("users", recordstore.ConflictSkip)
		k.Indexes = [][]string{{"v"}, {"ver", "tie"}, {"v"}}
		declare(b, k)
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM pragma_index_list('users')`)).To(BeEquivalentTo(4), "the primary key, the key index and two declared ones")
		k.Indexes = [][]string{{"v"}, {"ver", "tie"}}
		Expect(declare(b, k)).To(Equal(recordstore.KindUnchanged))
	})

	It("still opens, reads and appends to a kind an earlier build stored under looser rules", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		declare(b, eventsKind())
		// What an earlier build stored for a kind with a json key, an lww
		// version that is a key column, a 1ms ttl and a repeated index.
		legacy := `{"name":"legacy","columns":[{"name":"doc","type":"json"},{"name":"v","type":"integer"}],` +
			`"key":["doc","v"],"onConflict":"lww","lww":{"version":"v"},"retention":{"mode":"rows","ttl":"1ms"},"indexes":[["v"],["v"]]}`
		db := rawDB(b)
		for _, ddl := range []string{
			`CREATE TABLE legacy ("_seq_stream" INTEGER NOT NULL, "_seq" INTEGER NOT NULL, "doc" TEXT, "v" INTEGER, PRIMARY KEY ("_seq_stream", "_seq")) WITHOUT ROWID`,
			`CREATE UNIQUE INDEX "legacy:key" ON legacy ("_seq_stream", "doc", "v")`,
			`CREATE INDEX "legacy:ix1" ON legacy ("v")`,
			`CREATE INDEX "legacy:ix2" ON legacy ("v")`,
		} {
			_, err := db.Exec(ddl)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := db.Exec(`INSERT INTO record_kinds VALUES ('legacy', 'legacy', 'legacy', ?, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`, legacy)
		Expect(err).NotTo(HaveOccurred())
		Expect(db.Close()).To(Succeed())
		Expect(b.Close()).To(Succeed())

		b = openAt(path, sqlite.Options{})
		k, err := b.Kind(ctx, "legacy")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Key).To(Equal([]string{"doc", "v"}))
		Expect(k.Indexes).To(Equal([][]string{{"v"}}))
		Expect(time.Duration(k.Retention.TTL)).To(Equal(time.Millisecond))
		mustAppend(b, "s", "legacy", recordstore.Row{"doc": map[string]any{"x": 1}, "v": 1})

		// Its writers go on: declared again as it is, it is unchanged, and a
		// batch carrying its schema (as a non-owner's append does) applies.
		Expect(declare(b, k)).To(Equal(recordstore.KindUnchanged))
		res := mustBatch(b, newBatch([]recordstore.Kind{k},
			recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "legacy"},
			appendEntry("s", k, recordstore.Row{"doc": map[string]any{"x": 2}, "v": 1})))
		Expect(codes(res[0])).To(Equal([]string{"", ""}))
		recs := mustScan(b, "s") // the first row may be gone already: the ttl is 1ms
		Expect(recs[len(recs)-1].Values["doc"]).To(BeEquivalentTo(`{"x":2}`))

		// Any change is a new declaration, held to today's rules.
		k.Columns = append(k.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
		_, err = b.DeclareKind(ctx, k)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("kind legacy: key column doc is json"))
		res = mustBatch(b, newBatch([]recordstore.Kind{k}, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "legacy"}))
		Expect(codes(res[0])).To(Equal([]string{"invalid"}))
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM pragma_table_info('legacy')`)).To(BeEquivalentTo(4))
	})
})
