package interop_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// TestDuckDBReadsLakeExport exports two streams of a real store with
// recordstore/lake in two runs and reads the folder with DuckDB's
// read_parquet over a glob with Hive partitioning: every row once, the
// stream and generation as columns, and the second run adding only the new
// rows.
func TestDuckDBReadsLakeExport(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "records.sqlite"), sqlite.Options{SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := recordstore.Kind{Name: "event", Columns: []recordstore.Column{
		{Name: "msg", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
	}}
	if _, err := b.DeclareKind(ctx, k); err != nil {
		t.Fatal(err)
	}
	add := func(stream string, from, n int) {
		rows := make([]recordstore.Row, n)
		for i := range rows {
			rows[i] = recordstore.Row{"msg": fmt.Sprintf("m%d", from+i), "n": int64(from + i)}
		}
		if _, err := b.Append(ctx, stream, "event", rows); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "lake")
	sink, err := lake.OpenSink(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	r := recordresults.NewReader(b)
	export := func() {
		for _, s := range []string{"a", "b"} {
			if _, err := lake.Export(ctx, r, s, sink, lake.Options{RowsPerFile: 700}); err != nil {
				t.Fatal(err)
			}
		}
	}
	db := openDuckDB(t)
	check := func(wantA, wantB int64) {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT stream, generation, count(*), count(DISTINCT _seq), min(_seq), max(_seq), sum(CASE WHEN n = _seq THEN 0 ELSE 1 END)
			FROM read_parquet(?, hive_partitioning = true) GROUP BY stream, generation ORDER BY stream`, filepath.Join(dir, "**", "*.parquet"))
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
