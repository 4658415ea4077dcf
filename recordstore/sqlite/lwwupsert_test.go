// Specs for the single-statement lww write of bound tables: the same
// results as the generic path (counts, seqs, stored rows, stream counters,
// sqlite_sequence) on random appends and batches, the tables it leaves to
// the generic path, and the connection's last_insert_rowid that happens to
// be the next seq.

package sqlite_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// lwwShape is a table the upsert is compared on: its DDL (%[1]s is the
// table's name), the kind's columns, and a random row for a key.
type lwwShape struct {
	ddl     []string
	columns []recordstore.Column
	version string
	tie     string
	row     func(r *rand.Rand, key string) recordstore.Row
	keys    []string
}

// lwwKind binds shape to table (or to none, for an engine table).
func lwwKind(name, table string, s lwwShape, extra string) recordstore.Kind {
	k := recordstore.Kind{Name: name, Columns: s.columns, Key: []string{"k"}, OnConflict: recordstore.ConflictLWW,
		LWW: &recordstore.LWW{Version: s.version, Tiebreak: s.tie}}
	if s.columns[0].Name == "key" {
		k.Key = []string{"key"}
	}
	if table != "" {
		ddl := make([]string, len(s.ddl))
		for i, d := range s.ddl {
			ddl[i] = fmt.Sprintf(d, table)
		}
		ddl[0] = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(ddl[0]), ";"), ")") + extra + ")"
		k.Table = &recordstore.BoundTable{Name: table, DDL: ddl}
	}
	return k
}

// pick returns one of vs at random (nil stands for a null).
func pick(r *rand.Rand, vs ...any) any { return vs[r.IntN(len(vs))] }

var cacheShape = lwwShape{
	ddl: []string{strings.Replace(cacheEntriesDDL, "IF NOT EXISTS cache_entries", "%[1]s", 1),
		"CREATE INDEX %[1]s_expires ON %[1]s(expires_at_ms) WHERE expires_at_ms IS NOT NULL",
		"CREATE INDEX %[1]s_scope ON %[1]s(scope, updated_at_ms)"},
	columns: cols("key", tText, "scope", tText, "value", tText, "size_bytes", tInt, "created_at_ms", tInt,
		"updated_at_ms", tInt, "expires_at_ms", tInt, "origin_worker_id", tText),
	version: "updated_at_ms", tie: "origin_worker_id",
	keys: []string{"a", "b", "c", "d", "e"},
	row: func(r *rand.Rand, key string) recordstore.Row {
		return recordstore.Row{"key": key, "scope": pick(r, "local", "cluster", "global"), "value": fmt.Sprint(r.IntN(1000)),
			"size_bytes": 3, "created_at_ms": 1, "updated_at_ms": pick(r, 1, 2, 3), "expires_at_ms": pick(r, nil, 50),
			"origin_worker_id": pick(r, "w1", "w2", "w3")}
	},
}

// nullableRow is a row of the shapes with columns k, v, t, val, whose
// version, tiebreak and value may be null.
func nullableRow(r *rand.Rand, key string) recordstore.Row {
	return recordstore.Row{"k": key, "v": pick(r, nil, 1, 2), "t": pick(r, nil, "x", "y"), "val": pick(r, nil, fmt.Sprint(r.IntN(1000)))}
}

var lwwShapes = []TableEntry{
	Entry("the cache's cache_entries", cacheShape),
	Entry("a rowid table whose version and tiebreak may be null, with a default", lwwShape{
		ddl:     []string{"CREATE TABLE %[1]s (k TEXT PRIMARY KEY, v INTEGER, t TEXT, val TEXT NOT NULL DEFAULT 'none')"},
		columns: cols("k", tText, "v", tInt, "t", tText, "val", tText), version: "v", tie: "t",
		keys: []string{"a", "b", "c", "d"}, row: nullableRow,
	}),
	Entry("an AUTOINCREMENT seq column and a UNIQUE index as the key", lwwShape{
		ddl: []string{"CREATE TABLE %[1]s (id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT NOT NULL, v INTEGER, t TEXT, val TEXT)",
			"CREATE UNIQUE INDEX %[1]s_k ON %[1]s (k)"},
		columns: cols("k", tText, "v", tInt, "t", tText, "val", tText), version: "v", tie: "t",
		keys: []string{"a", "b", "c", "d"}, row: nullableRow,
	}),
	Entry("a key compared without case, and no tiebreak", lwwShape{
		ddl:     []string{"CREATE TABLE %[1]s (k TEXT PRIMARY KEY COLLATE NOCASE, v INTEGER NOT NULL, val TEXT)"},
		columns: cols("k", tText, "v", tInt, "val", tText), version: "v",
		keys: []string{"a", "A", "b", "B"},
		row: func(r *rand.Rand, key string) recordstore.Row {
			return recordstore.Row{"k": key, "v": pick(r, 1, 2, 3), "val": fmt.Sprint(r.IntN(1000))}
		},
	}),
}

// appendResult is res without the stream and kind, which differ between
// the tables compared.
func appendResult(res recordstore.AppendResult) recordstore.AppendResult {
	res.Stream, res.Kind = "", ""
	return res
}

// metaCounts is a stream's generation and counters.
func metaCounts(b *sqlite.Backend, stream string) []int64 {
	m, err := b.Meta(ctx, stream)
	Expect(err).NotTo(HaveOccurred())
	return []int64{m.Generation, m.Total, m.LowSeq, m.HighSeq}
}

// seqValues is every record's seq and values, in seq order.
func seqValues(recs []recordstore.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d %v", r.Seq, r.Values)
	}
	return out
}

// usedIDs is an AUTOINCREMENT table's sqlite_sequence entry (-1 when the
// table has none).
func usedIDs(db *sql.DB, table string) int64 {
	if rawCount(db, `SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'`) == 0 {
		return -1
	}
	return rawCount(db, `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), -1)`, table)
}

// compareWithGeneric appends the same random rows of shape s to a table
// the upsert writes and to one the generic path writes (a column the
// kind does not write keeps it there), rounds times, by Append and by
// AppendBatch, deleting both streams now and then, and compares every
// result, the streams' counters and rows, and sqlite_sequence.
func compareWithGeneric(s lwwShape, rounds int) {
	b := openStore(newClock())
	db := rawDB(b)
	fast := lwwKind("fast", "t_fast", s, "")
	slow := lwwKind("slow", "t_slow", s, ", spare TEXT")
	declare(b, fast)
	declare(b, slow)
	r := rand.New(rand.NewPCG(7, 11))
	for round := range rounds {
		keys := append([]string(nil), s.keys...)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		rows := make([]recordstore.Row, 1+r.IntN(len(keys)))
		for i := range rows {
			rows[i] = s.row(r, keys[i])
		}
		if round%3 == 2 {
			res := mustBatch(b, newBatch(nil, appendEntry("f", fast, rows...), appendEntry("s", slow, rows...)))
			Expect(codes(res[0])).To(Equal([]string{"", ""}))
			Expect(appendResult(*res[0].Entries[0].Append)).To(Equal(appendResult(*res[0].Entries[1].Append)), "batch %d", round)
		} else {
			Expect(appendResult(mustAppend(b, "f", "fast", rows...))).To(Equal(appendResult(mustAppend(b, "s", "slow", rows...))), "append %d", round)
		}
		if round%50 == 24 {
			Expect(b.Delete(ctx, "f")).To(Succeed())
			Expect(b.Delete(ctx, "s")).To(Succeed())
		}
	}
	Expect(sqlite.LWWUpsert(b, "fast")).To(BeTrue())
	Expect(sqlite.LWWUpsert(b, "slow")).To(BeFalse())
	Expect(metaCounts(b, "f")).To(Equal(metaCounts(b, "s")))
	Expect(seqValues(mustScan(b, "f"))).To(Equal(seqValues(mustScan(b, "s"))))
	Expect(rawCount(db, `SELECT count(*) FROM t_fast`)).To(BeNumerically(">", 0))
	Expect(usedIDs(db, "t_fast")).To(Equal(usedIDs(db, "t_slow")))
}

var _ = Describe("The single-statement lww write of a bound table", func() {
	DescribeTable("leaves what the generic path leaves, append by append and batch by batch, on",
		func(s lwwShape) { compareWithGeneric(s, 300) },
		lwwShapes,
	)

	It("leaves what the generic path leaves with appends long enough to go to the driver directly", func() {
		s := cacheShape
		s.keys = make([]string, 700)
		for i := range s.keys {
			s.keys[i] = fmt.Sprintf("k%03d", i)
		}
		compareWithGeneric(s, 12)
	})

	It("refuses a long append with a row the table's CHECK refuses, storing nothing of it", func() {
		b := openStore(newClock())
		db := rawDB(b)
		declare(b, lwwKind("cache", "cache_entries", cacheShape, ""))
		row := func(i, ver int, scope string) recordstore.Row {
			return recordstore.Row{"key": fmt.Sprintf("k%03d", i), "scope": scope, "value": fmt.Sprint(ver), "size_bytes": 1,
				"created_at_ms": 1, "updated_at_ms": ver, "origin_worker_id": "w1"}
		}
		rows := make([]recordstore.Row, 400)
		for i := range rows {
			rows[i] = row(i, 1, "global")
		}
		mustAppend(b, "c", "cache", rows...)
		before := metaCounts(b, "c")
		for i := range rows {
			rows[i] = row(i, 2, "global")
		}
		rows[300] = row(300, 2, "galactic")
		_, err := b.Append(ctx, "c", "cache", rows)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("CHECK"))
		Expect(metaCounts(b, "c")).To(Equal(before))
		Expect(rawCount(db, `SELECT count(*) FROM cache_entries WHERE updated_at_ms = 2`)).To(BeZero())
		Expect(rawCount(db, `SELECT max(rowid) FROM cache_entries`)).To(BeEquivalentTo(400))
	})

	It("counts a new key as appended when another table's insert left the row's seq as the last rowid", func() {
		b := openStore(newClock())
		cache := lwwKind("cache", "cache_entries", cacheShape, "")
		declare(b, cache)
		declare(b, boundEvents("ev"))
		row := func(key string, ver int) recordstore.Row {
			return recordstore.Row{"key": key, "scope": "global", "value": "1", "size_bytes": 1, "created_at_ms": 1,
				"updated_at_ms": ver, "origin_worker_id": "w1"}
		}
		mustAppend(b, "c", "cache", row("a", 1), row("b", 1), row("c", 1))
		mustAppend(b, "w", "ev", event("1"), event("2"), event("3"))
		// The event gets id 4, the cache's next seq: its INSERT leaves 4
		// as the connection's last rowid when the cache entry starts.
		res := mustBatch(b, newBatch(nil, appendEntry("w", boundEvents("ev"), event("4")),
			appendEntry("c", cache, row("d", 1), row("a", 2))))
		Expect(codes(res[0])).To(Equal([]string{"", ""}))
		Expect(res[0].Entries[0].Append.To).To(BeEquivalentTo(4))
		Expect(appendResult(*res[0].Entries[1].Append)).To(Equal(recordstore.AppendResult{From: 4, To: 5, Appended: 2, Replaced: 1}))
		Expect(metaCounts(b, "c")).To(Equal([]int64{1, 4, 2, 5}))
		Expect(seqs(mustScan(b, "c"))).To(Equal([]int64{2, 3, 4, 5}))
	})

	Describe("keeps to the generic path", func() {
		var (
			b     *sqlite.Backend
			cache recordstore.Kind
			row   func(value string, ver int) recordstore.Row
		)
		BeforeEach(func() {
			b = openStore(newClock())
			cache = lwwKind("cache", "cache_entries", cacheShape, "")
			declare(b, cache)
			row = func(value string, ver int) recordstore.Row {
				return recordstore.Row{"key": "k", "scope": "global", "value": value, "size_bytes": 1, "created_at_ms": 1,
					"updated_at_ms": ver, "origin_worker_id": "w1"}
			}
			mustAppend(b, "c", "cache", row("first", 1))
			Expect(mustAppend(b, "c", "cache", row("second", 2)).Replaced).To(BeEquivalentTo(1))
			Expect(sqlite.LWWUpsert(b, "cache")).To(BeTrue())
		})

		It("a table on which another program created a trigger, which sees the stored row deleted", func() {
			db := rawDB(b)
			for _, stmt := range []string{`CREATE TABLE gone (key TEXT, value TEXT)`,
				`CREATE TRIGGER cache_gone AFTER DELETE ON cache_entries BEGIN INSERT INTO gone VALUES (old.key, old.value); END`} {
				_, err := db.Exec(stmt)
				Expect(err).NotTo(HaveOccurred())
			}
			res := mustAppend(b, "c", "cache", row("third", 3))
			Expect(appendResult(res)).To(Equal(recordstore.AppendResult{From: 3, To: 3, Appended: 1, Replaced: 1}))
			Expect(sqlite.LWWUpsert(b, "cache")).To(BeFalse())
			Expect(rawCount(db, `SELECT count(*) FROM gone WHERE key = 'k' AND value = 'second'`)).To(BeEquivalentTo(1))
		})

		It("a table that gained a column the kind does not write, which a replaced row gets the default of", func() {
			db := rawDB(b)
			for _, stmt := range []string{`ALTER TABLE cache_entries ADD COLUMN note TEXT DEFAULT 'fresh'`,
				`UPDATE cache_entries SET note = 'old'`} {
				_, err := db.Exec(stmt)
				Expect(err).NotTo(HaveOccurred())
			}
			Expect(mustAppend(b, "c", "cache", row("third", 3)).Replaced).To(BeEquivalentTo(1))
			Expect(sqlite.LWWUpsert(b, "cache")).To(BeFalse())
			Expect(rawCount(db, `SELECT count(*) FROM cache_entries WHERE note = 'fresh' AND value = 'third'`)).To(BeEquivalentTo(1))
		})
	})
})
