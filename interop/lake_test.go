package interop_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// lakeExport is a real SQLite store and a lake folder, both in a test's
// temporary folder: add appends rows to a stream, export exports a stream
// into the folder (RowsPerFile and PartitionBy from opts) and files is the
// glob DuckDB reads the folder's part files with. The store is closed
// when the test ends.
type lakeExport struct {
	t    *testing.T
	ctx  context.Context
	b    *sqlite.Backend
	r    *recordresults.Reader
	kind string
	dir  string
	sink lake.Sink
}

// newLakeExport opens the store with kind k declared and the sink on a
// new folder "lake".
func newLakeExport(t *testing.T, k recordstore.Kind) *lakeExport {
	t.Helper()
	ctx := context.Background()
	b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "records.sqlite"), sqlite.Options{SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.DeclareKind(ctx, k); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lake")
	sink, err := lake.OpenSink(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return &lakeExport{t: t, ctx: ctx, b: b, r: recordresults.NewReader(b), kind: k.Name, dir: dir, sink: sink}
}

// add appends rows of the store's kind to stream.
func (e *lakeExport) add(stream string, rows []recordstore.Row) {
	e.t.Helper()
	if _, err := e.b.Append(e.ctx, stream, e.kind, rows); err != nil {
		e.t.Fatal(err)
	}
}

// export exports stream into the lake folder.
func (e *lakeExport) export(stream string, opts lake.Options) {
	e.t.Helper()
	if _, err := lake.Export(e.ctx, e.r, stream, e.sink, opts); err != nil {
		e.t.Fatal(err)
	}
}

// files is the glob of every part file under the lake folder.
func (e *lakeExport) files() string { return filepath.Join(e.dir, "**", "*.parquet") }

// TestDuckDBReadsLakeExport exports two streams of a real store with
// recordstore/lake in two runs and reads the folder with DuckDB's
// read_parquet over a glob with Hive partitioning: every row once, the
// stream and generation as columns, and the second run adding only the new
// rows.
func TestDuckDBReadsLakeExport(t *testing.T) {
	ctx := context.Background()
	e := newLakeExport(t, recordstore.Kind{Name: "event", Columns: []recordstore.Column{
		{Name: "msg", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
	}})
	add := func(stream string, from, n int) {
		rows := make([]recordstore.Row, n)
		for i := range rows {
			rows[i] = recordstore.Row{"msg": fmt.Sprintf("m%d", from+i), "n": int64(from + i)}
		}
		e.add(stream, rows)
	}
	export := func() {
		for _, s := range []string{"a", "b"} {
			e.export(s, lake.Options{RowsPerFile: 700})
		}
	}
	db := openDuckDB(t)
	check := func(wantA, wantB int64) {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT stream, generation, count(*), count(DISTINCT _seq), min(_seq), max(_seq), sum(CASE WHEN n = _seq THEN 0 ELSE 1 END)
			FROM read_parquet(?, hive_partitioning = true) GROUP BY stream, generation ORDER BY stream`, e.files())
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int64{}
		for rows.Next() {
			var stream string
			var gen, n, distinct, lo, hi, wrong int64
			if err := rows.Scan(&stream, &gen, &n, &distinct, &lo, &hi, &wrong); err != nil {
				t.Fatal(err)
			}
			if gen != 1 || n != distinct || lo != 1 || hi != n || wrong != 0 {
				t.Fatalf("stream %s: generation %d, %d rows, %d distinct seqs, seqs %d..%d, %d rows whose n is not their seq", stream, gen, n, distinct, lo, hi, wrong)
			}
			got[stream] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if got["a"] != wantA || got["b"] != wantB || len(got) != 2 {
			t.Fatalf("rows per stream %v, want a=%d b=%d", got, wantA, wantB)
		}
	}
	add("a", 1, 1500)
	add("b", 1, 10)
	export()
	check(1500, 10)
	add("a", 1501, 300)
	export()
	check(1800, 10)
}

// TestDuckDBReadsPartitionedLakeExport exports a stream partitioned by
// day of a datetime column in two runs and reads the folder with DuckDB's
// Hive partitioning: the folder's at_day column gives the right count per
// day (nulls under __HIVE_DEFAULT_PARTITION__ read as NULL), agrees with
// the file's own at column, and the second run's rows of a day that
// already had a file land in a new file of that day.
func TestDuckDBReadsPartitionedLakeExport(t *testing.T) {
	ctx := context.Background()
	e := newLakeExport(t, recordstore.Kind{Name: "tick", Columns: []recordstore.Column{
		{Name: "at", Type: recordstore.TypeDatetime},
		{Name: "n", Type: recordstore.TypeInteger},
	}})
	day0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	want := map[string]int64{}
	seq := int64(0)
	add := func(n int) {
		rows := make([]recordstore.Row, n)
		for i := range rows {
			seq++
			rows[i] = recordstore.Row{"n": seq}
			if seq%7 == 0 {
				want["null"]++
				continue
			}
			at := day0.Add(time.Duration(seq) * 5 * time.Hour) // 4.8 rows a day
			rows[i]["at"] = at.Format(time.RFC3339)
			want[at.Format("2006-01-02")]++
		}
		e.add("t", rows)
	}
	export := func() {
		e.export("t", lake.Options{RowsPerFile: 20, PartitionBy: lake.Partitioning{Column: "at", Unit: lake.UnitDay}})
	}
	db := openDuckDB(t)
	check := func() {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT coalesce(CAST(at_day AS VARCHAR), 'null'), typeof(at_day), count(*), count(DISTINCT _seq),
				sum(CASE WHEN ("at" IS NULL AND at_day IS NULL) OR CAST("at" AS DATE) = at_day THEN 0 ELSE 1 END)
			FROM read_parquet(?, hive_partitioning = true) GROUP BY ALL ORDER BY 1`, e.files())
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int64{}
		for rows.Next() {
			var day, typ string
			var n, distinct, wrong int64
			if err := rows.Scan(&day, &typ, &n, &distinct, &wrong); err != nil {
				t.Fatal(err)
			}
			if typ != "DATE" || n != distinct || wrong != 0 {
				t.Fatalf("day %s: at_day of type %s, %d rows, %d distinct seqs, %d rows outside their day", day, typ, n, distinct, wrong)
			}
			got[day] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rows per day %v, want %v", got, want)
		}
	}
	add(50)
	export()
	check()
	add(13)
	export()
	check()
}
