// Specs for bound kinds: kinds bound to tables created from the caller's
// DDL (the Drakkar spec's tables), their seq, their conflict policies,
// their one stream, and the declarations refused without a trace.

package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// schemaSQL returns sqlite_master.sql of the named object.
func schemaSQL(db *sql.DB, name string) string {
	var s string
	Expect(db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = ?`, name).Scan(&s)).To(Succeed())
	return s
}

// schemaSnapshot is every schema object's name and text, and the catalog.
func schemaSnapshot(db *sql.DB) []string {
	rows, err := db.Query(`SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master
		UNION ALL SELECT 'kind ' || name || ' ' || schema FROM record_kinds ORDER BY 1`)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		Expect(rows.Scan(&s)).To(Succeed())
		out = append(out, s)
	}
	Expect(rows.Err()).To(Succeed())
	return out
}

var _ = Describe("Bound kinds", func() {
	var (
		b  *sqlite.Backend
		db *sql.DB
	)
	BeforeEach(func() {
		b = openStore(newClock())
		db = rawDB(b)
	})

	It("creates the spec's tables from their DDL, verbatim", func() {
		Expect(declare(b, boundEvents("ev"))).To(Equal(recordstore.KindCreated))
		Expect(declare(b, boundWorkerConfig())).To(Equal(recordstore.KindCreated))
		Expect(declare(b, boundWorkerState())).To(Equal(recordstore.KindCreated))
		Expect(declare(b, boundCache())).To(Equal(recordstore.KindCreated))

		Expect(schemaSQL(db, "events")).To(Equal(storedText(eventsDDL)))
		Expect(schemaSQL(db, "idx_events_labels")).To(Equal(storedText(eventsIndexDDL[5])))
		Expect(schemaSQL(db, "worker_config")).To(Equal(storedText(workerConfigDDL)))
		Expect(schemaSQL(db, "worker_state")).To(Equal(storedText(workerStateDDL)))
		Expect(schemaSQL(db, "idx_worker_state_updated")).To(Equal(storedText(workerStateIndexDDL)))
		Expect(schemaSQL(db, "cache_entries")).To(Equal(storedText(cacheEntriesDDL)))
		Expect(rawCount(db, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'idx_events_%'`)).To(BeEquivalentTo(len(eventsIndexDDL)))
	})

	It("declares the same bound kind again as unchanged, and refuses another binding", func() {
		declare(b, boundWorkerState())
		Expect(declare(b, boundWorkerState())).To(Equal(recordstore.KindUnchanged))
		before := schemaSnapshot(db)

		other := boundWorkerState()
		other.Table.DDL = []string{workerStateDDL}
		_, err := b.DeclareKind(ctx, other)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		unbound := boundWorkerState()
		unbound.Table = nil
		_, err = b.DeclareKind(ctx, unbound)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		wider := boundWorkerState()
		wider.Columns = append(wider.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
		_, err = b.DeclareKind(ctx, wider)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		Expect(schemaSnapshot(db)).To(Equal(before))
	})

	It("stores the seq in the INTEGER PRIMARY KEY, and sqlite_sequence follows", func() {
		declare(b, boundEvents("ev"))
		res := mustAppend(b, "w1", "ev", event("start"), event("task"), event("stop"))
		Expect([]int64{res.From, res.To}).To(Equal([]int64{1, 3}))
		res = mustAppend(b, "w1", "ev", event("more"))
		Expect([]int64{res.From, res.To}).To(Equal([]int64{4, 4}))

		recs := mustScan(b, "w1")
		Expect(seqs(recs)).To(Equal([]int64{1, 2, 3, 4}))
		Expect(recs[3].Values["event"]).To(Equal("more"))
		Expect(recs[0].Values["origin"]).To(Equal("kafka"), "a NOT NULL column's DEFAULT fills a null value")
		Expect(recs[0].Values["stdout_size"]).To(BeNil(), "a nullable column keeps its null")
		ids := rawInts(db, `SELECT id FROM events ORDER BY id`)
		Expect(ids).To(Equal([]int64{1, 2, 3, 4}))
		Expect(rawCount(db, `SELECT seq FROM sqlite_sequence WHERE name = 'events'`)).To(BeEquivalentTo(4))
		m := mustMeta(b, "w1")
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{1, 4, 4}))
	})

	It("writes many rows at once through the multi-row inserts, seq = id", func() {
		declare(b, boundWorkerState())
		rows := make([]recordstore.Row, 150)
		for i := range rows {
			rows[i] = recordstore.Row{"updated_at": float64(i), "updated_at_dt": "x", "pool_max": i}
		}
		mustAppend(b, "w1", "worker_state", rows...)
		Expect(rawCount(db, `SELECT count(*) FROM worker_state WHERE pool_max = id - 1`)).To(BeEquivalentTo(150))
		Expect(rawCount(db, `SELECT seq FROM sqlite_sequence WHERE name = 'worker_state'`)).To(BeEquivalentTo(150))
		Expect(seqs(mustScan(b, "w1"))[149]).To(BeEquivalentTo(150))
	})

	It("fills NOT NULL defaults in a large append too, through the driver's bulk path", func() {
		declare(b, boundEvents("ev"))
		rows := make([]recordstore.Row, 1100)
		for i := range rows {
			rows[i] = event("bulk")
			rows[i]["pid"] = i
		}
		res := mustAppend(b, "w1", "ev", rows...)
		Expect([]int64{res.From, res.To}).To(Equal([]int64{1, 1100}))
		Expect(rawCount(db, `SELECT count(*) FROM events WHERE origin = 'kafka' AND pid = id - 1`)).To(BeEquivalentTo(1100))
		Expect(rawCount(db, `SELECT seq FROM sqlite_sequence WHERE name = 'events'`)).To(BeEquivalentTo(1100))
	})

	It("replaces worker_config's one row on id, keeping one row with id 1", func() {
		declare(b, boundWorkerConfig())
		cfg := func(name string) recordstore.Row {
			return recordstore.Row{"id": 1, "worker_name": name, "created_at": 1.0, "created_at_dt": "d"}
		}
		mustAppend(b, "w1", "worker_config", cfg("a"))
		res := mustAppend(b, "w1", "worker_config", cfg("b"))
		Expect(res.Replaced).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT count(*) FROM worker_config`)).To(BeEquivalentTo(1))
		recs := mustScan(b, "w1")
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Seq).To(BeEquivalentTo(1))
		Expect(recs[0].Values["worker_name"]).To(Equal("b"))

		_, err := b.Append(ctx, "w1", "worker_config", []recordstore.Row{{"id": 2, "worker_name": "c", "created_at": 1.0, "created_at_dt": "d"}})
		Expect(err).To(MatchError(recordstore.ErrInvalid)) // CHECK (id = 1)
		Expect(err.Error()).To(ContainSubstring("table worker_config refuses a row"))
		k := boundWorkerConfig()
		bad := cfg("c")
		bad["id"] = 2
		bres := mustBatch(b, newBatch([]recordstore.Kind{k}, appendEntry("w1", k, bad), appendEntry("w1", k, cfg("d"))))
		Expect(codes(bres[0])).To(Equal([]string{"invalid", ""}), "the refused row fails its entry, not the batch")
		Expect(rawCount(db, `SELECT count(*) FROM worker_config WHERE id = 1 AND worker_name = 'd'`)).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT count(*) FROM worker_config`)).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT count(*) FROM worker_config`)).To(BeEquivalentTo(1))
		_, err = b.Trim(ctx, "w1", newClock().Now())
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("applies lww on cache_entries' own key, ties going to the smaller origin", func() {
		declare(b, boundCache())
		entry := func(v string, ver int, origin string) recordstore.Row {
			return recordstore.Row{"key": "k", "scope": "local", "value": v, "size_bytes": 1,
				"created_at_ms": 1, "updated_at_ms": ver, "origin_worker_id": origin}
		}
		mustAppend(b, "c", "cache", entry("first", 10, "w2"))
		Expect(mustAppend(b, "c", "cache", entry("older", 9, "w1")).Skipped).To(BeEquivalentTo(1))
		Expect(mustAppend(b, "c", "cache", entry("tie-larger", 10, "w3")).Skipped).To(BeEquivalentTo(1))
		Expect(mustAppend(b, "c", "cache", entry("tie-smaller", 10, "w1")).Replaced).To(BeEquivalentTo(1))
		Expect(mustAppend(b, "c", "cache", entry("newer", 11, "w9")).Replaced).To(BeEquivalentTo(1))

		recs := mustScan(b, "c")
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Values["value"]).To(Equal("newer"))
		Expect(recs[0].Seq).To(BeEquivalentTo(3))
		Expect(rawCount(db, `SELECT rowid FROM cache_entries`)).To(BeEquivalentTo(3))
	})

	It("keeps a bound kind to one stream, in an append and in a batch entry", func() {
		declare(b, boundEvents("ev"))
		mustAppend(b, "w1", "ev", event("a"))

		_, err := b.Append(ctx, "w2", "ev", []recordstore.Row{event("b")})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("holds stream w1"))

		k := boundEvents("ev")
		res := mustBatch(b, newBatch([]recordstore.Kind{k}, appendEntry("w2", k, event("b")), appendEntry("w1", k, event("c"))))
		Expect(codes(res[0])).To(Equal([]string{"invalid", ""}))
		Expect(rawInts(db, `SELECT id FROM events ORDER BY id`)).To(Equal([]int64{1, 2}))
		_, err = b.Meta(ctx, "w2")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(rawCount(db, `SELECT count(*) FROM record_streams`)).To(BeEquivalentTo(1))
	})

	It("deletes a bound stream's rows only from its table, and frees the table for another stream", func() {
		declare(b, boundEvents("ev"))
		declare(b, boundWorkerState())
		declare(b, keyedKind("other", recordstore.ConflictSkip))
		mustAppend(b, "w1", "ev", event("a"), event("b"))
		mustAppend(b, "s1", "worker_state", recordstore.Row{"updated_at": 1.0, "updated_at_dt": "x"})
		mustAppend(b, "o1", "other", recordstore.Row{"id": "x"})

		Expect(b.Delete(ctx, "w1")).To(Succeed())
		Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeZero())
		Expect(rawCount(db, `SELECT count(*) FROM worker_state`)).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT count(*) FROM other`)).To(BeEquivalentTo(1))

		res := mustAppend(b, "w2", "ev", event("c"))
		Expect(res.From).To(BeEquivalentTo(3), "AUTOINCREMENT ids are not reused")
		Expect(seqs(mustScan(b, "w2"))).To(Equal([]int64{3}))
		Expect(rawCount(db, `SELECT seq FROM sqlite_sequence WHERE name = 'events'`)).To(BeEquivalentTo(3))
	})

	It("trims, seals and expires a bound stream in its own table only", func() {
		clk := newClock()
		b := openStore(clk)
		db := rawDB(b)
		declare(b, boundEvents("ev"))
		declare(b, boundWorkerState())
		mustAppend(b, "w1", "ev", event("a"), event("b"))
		mustAppend(b, "s1", "worker_state", recordstore.Row{"updated_at": 1.0, "updated_at_dt": "x"})
		clk.Advance(time.Minute)
		mustAppend(b, "w1", "ev", event("c"))

		m, err := b.Trim(ctx, "w1", clk.Now().Add(-time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{3, 3, 1}))
		Expect(rawInts(db, `SELECT id FROM events`)).To(Equal([]int64{3}))

		_, err = b.Seal(ctx, "w1")
		Expect(err).NotTo(HaveOccurred())
		_, err = b.Append(ctx, "w1", "ev", []recordstore.Row{event("d")})
		Expect(err).To(MatchError(recordstore.ErrSealed))

		_, err = b.Expire(ctx, "w1", time.Second)
		Expect(err).NotTo(HaveOccurred())
		clk.Advance(2 * time.Second)
		Expect(b.Sweep(ctx)).To(Succeed())
		Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeZero())
		Expect(rawCount(db, `SELECT count(*) FROM worker_state`)).To(BeEquivalentTo(1))
		Expect(mustAppend(b, "w1", "ev", event("e")).From).To(BeEquivalentTo(4), "the next generation goes on after the AUTOINCREMENT ids")
	})

	It("refuses an engine kind whose table a bound kind holds", func() {
		declare(b, boundEvents("ev"))
		before := schemaSnapshot(db)
		_, err := b.DeclareKind(ctx, eventsKind())
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(schemaSnapshot(db)).To(Equal(before))
	})

	It("reads a bound kind after a reopen, and appends on", func() {
		path := storePath()
		b1, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		_, err = b1.DeclareKind(ctx, boundEvents("ev"))
		Expect(err).NotTo(HaveOccurred())
		_, err = b1.Append(ctx, "w1", "ev", []recordstore.Row{event("a")})
		Expect(err).NotTo(HaveOccurred())
		Expect(b1.Close()).To(Succeed())

		b2 := openAt(path, sqlite.Options{})
		Expect(mustAppend(b2, "w1", "ev", event("b")).From).To(BeEquivalentTo(2))
		Expect(seqs(mustScan(b2, "w1"))).To(Equal([]int64{1, 2}))
	})
})

func rawInts(db *sql.DB, q string) []int64 {
	rows, err := db.Query(q)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		Expect(rows.Scan(&n)).To(Succeed())
		out = append(out, n)
	}
	return out
}

// boundKind is a kind "k" of the given columns bound to table t by ddl.
func boundKind(columns []recordstore.Column, key []string, ddl ...string) recordstore.Kind {
	return recordstore.Kind{Name: "k", Columns: columns, Key: key, Table: &recordstore.BoundTable{Name: "t", DDL: ddl}}
}

var _ = Describe("Bound kind declarations", func() {
	DescribeTable("are refused with ErrInvalid, changing nothing, when",
		func(k recordstore.Kind, says string) {
			b := openStore(newClock())
			db := rawDB(b)
			declare(b, boundCache()) // a table already in the file
			before := schemaSnapshot(db)
			_, err := b.DeclareKind(ctx, k)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(says))
			Expect(schemaSnapshot(db)).To(Equal(before))
		},
		Entry("a DDL statement holds two statements",
			boundKind(cols("a", tText), nil, "CREATE TABLE t (a TEXT); DROP TABLE record_kinds"), "more than one statement"),
		Entry("a statement drops a table",
			boundKind(cols("a", tText), nil, "CREATE TABLE t (a TEXT)", "DROP TABLE cache_entries"), "statement 2"),
		Entry("a statement attaches a file",
			boundKind(cols("a", tText), nil, "ATTACH DATABASE 'x.db' AS x"), "want CREATE TABLE"),
		Entry("the DDL creates another table",
			boundKind(cols("a", tText), nil, "CREATE TABLE u (a TEXT)"), "want CREATE TABLE t"),
		Entry("an index is on another table",
			boundKind(cols("a", tText), nil, "CREATE TABLE t (a TEXT)", "CREATE INDEX i ON cache_entries(value)"), "ON t"),
		Entry("the table is schema-qualified",
			boundKind(cols("a", tText), nil, "CREATE TABLE main.t (a TEXT)"), "want CREATE TABLE t"),
		Entry("the table is made from a SELECT",
			boundKind(cols("a", tText), nil, "CREATE TABLE t AS SELECT * FROM cache_entries"), "column list"),
		Entry("SQLite refuses the DDL",
			boundKind(cols("a", tText), nil, "CREATE TABLE t (a TEXT,,)", "CREATE INDEX i ON t(a)"), "DDL statement 1"),
		Entry("a kind column is missing from the table",
			boundKind(cols("a", tText, "b", tText), nil, "CREATE TABLE t (a TEXT)"), "column b is not a column of table t"),
		Entry("a column's type does not match",
			boundKind(cols("a", tInt), nil, "CREATE TABLE t (a TEXT)"), "column a is \"TEXT\" in table t"),
		Entry("a NOT NULL column is not in the kind",
			boundKind(cols("a", tText), nil, "CREATE TABLE t (a TEXT, b TEXT NOT NULL)"), "column b of table t is NOT NULL"),
		Entry("the key is not unique in the table",
			boundKind(cols("a", tText, "b", tText), []string{"a"}, "CREATE TABLE t (a TEXT, b TEXT)", "CREATE INDEX i ON t(a, b)"), "key (a)"),
		Entry("the key is unique only in a partial index",
			boundKind(cols("a", tText), []string{"a"}, "CREATE TABLE t (a TEXT)", "CREATE UNIQUE INDEX i ON t(a) WHERE a > ''"), "key (a)"),
		Entry("the table is WITHOUT ROWID",
			boundKind(cols("a", tText), []string{"a"}, "CREATE TABLE t (a TEXT PRIMARY KEY) WITHOUT ROWID"), "WITHOUT ROWID"),
		Entry("the table is another bound kind's",
			func() recordstore.Kind { k := boundCache(); k.Name = "cache2"; return k }(), "is the table of kind cache"),
		Entry("the table name is reserved",
			recordstore.Kind{Name: "k", Columns: cols("a", tText), Table: &recordstore.BoundTable{Name: "record_x", DDL: []string{"CREATE TABLE record_x (a TEXT)"}}}, "reserved"),
	)

	It("accepts a key that is a UNIQUE index's columns, in any order", func() {
		b := openStore(newClock())
		k := boundKind(cols("a", tText, "b", tText, "v", tInt), []string{"b", "a"},
			"CREATE TABLE t (a TEXT, b TEXT, v INTEGER)", "CREATE UNIQUE INDEX t_ab ON t(a, b)")
		k.OnConflict = recordstore.ConflictReplace
		declare(b, k)
		mustAppend(b, "s", "k", recordstore.Row{"a": "x", "b": "y", "v": 1})
		res := mustAppend(b, "s", "k", recordstore.Row{"a": "x", "b": "y", "v": 2})
		Expect(res.Replaced).To(BeEquivalentTo(1))
		recs := mustScan(b, "s")
		Expect(seqs(recs)).To(Equal([]int64{2}), "a table without an INTEGER PRIMARY KEY keeps the seq in its rowid")
		Expect(recs[0].Values["v"]).To(BeEquivalentTo(2))
	})

	It("adopts a table another implementation created and filled, running none of its DDL", func() {
		path := storePath()
		live := sqlite.LivePath(path)
		Expect(os.MkdirAll(filepath.Dir(live), 0o700)).To(Succeed())
		other, err := sql.Open("sqlite", live)
		Expect(err).NotTo(HaveOccurred())
		// Another spacing than the kind's DDL: the file keeps its own text.
		theirs := "CREATE TABLE worker_state (id INTEGER PRIMARY KEY AUTOINCREMENT, uptime_seconds REAL, assigned_partitions TEXT, partition_count INTEGER, pool_active INTEGER, pool_max INTEGER, total_queued INTEGER, consumed_count INTEGER, completed_count INTEGER, failed_count INTEGER, produced_count INTEGER, committed_count INTEGER, paused INTEGER, health_state TEXT, loop_lag_ms REAL, throughput TEXT, updated_at REAL NOT NULL, updated_at_dt TEXT NOT NULL)"
		_, err = other.Exec(theirs)
		Expect(err).NotTo(HaveOccurred())
		_, err = other.Exec(`INSERT INTO worker_state (updated_at, updated_at_dt) VALUES (1, 'a'), (2, 'b')`)
		Expect(err).NotTo(HaveOccurred())
		Expect(other.Close()).To(Succeed())

		b := openAt(path, sqlite.Options{})
		db := rawDB(b)
		Expect(declare(b, boundWorkerState())).To(Equal(recordstore.KindCreated))
		Expect(schemaSQL(db, "worker_state")).To(Equal(theirs))
		Expect(rawCount(db, `SELECT count(*) FROM sqlite_master WHERE name = 'idx_worker_state_updated'`)).To(BeZero())

		res := mustAppend(b, "w", "worker_state", recordstore.Row{"updated_at": 3.0, "updated_at_dt": "c"})
		Expect(res.From).To(BeEquivalentTo(3))
		recs := mustScan(b, "w")
		Expect(seqs(recs)).To(Equal([]int64{1, 2, 3}))
		Expect(recs[0].Values["updated_at_dt"]).To(Equal("a"))
		m := mustMeta(b, "w")
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{1, 3, 3}))
	})
})

var _ = Describe("Bound kinds in read-only mode", func() {
	It("declare through the owner, then read and write through it; a misfit is the owner's ErrInvalid", func() {
		path := storePath()
		w := openAt(path, sqlite.Options{})
		own := &owner{b: w}
		ro := openAt(path, sqlite.Options{ReadOnly: true, Submit: own.submit, ChangeInterval: 5 * time.Millisecond})

		st, err := ro.DeclareKind(ctx, boundWorkerConfig())
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindCreated))
		Expect(schemaSQL(rawDB(w), "worker_config")).To(Equal(storedText(workerConfigDDL)))
		row := recordstore.Row{"id": 1, "worker_name": "n", "created_at": 1.0, "created_at_dt": "d"}
		res, err := ro.Append(ctx, "w", "worker_config", []recordstore.Row{row})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Appended).To(BeEquivalentTo(1))
		recs, err := ro.Scan(ctx, "w", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(seqs(recs)).To(Equal([]int64{1}))

		before := schemaSnapshot(rawDB(w))
		misfit := boundKind(cols("a", tInt), nil, "CREATE TABLE t (a TEXT)")
		_, err = ro.DeclareKind(ctx, misfit)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(schemaSnapshot(rawDB(w))).To(Equal(before))
	})
})
