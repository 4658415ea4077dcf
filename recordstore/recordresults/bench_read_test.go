// Benchmarks of the read side: a q search over a large stream with and
// without the search index, and exports per format against a scan of the
// same rows, each pair measured alternately in the same run.

package recordresults_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// benchLogs is the kind the read benchmarks fill: a message to search, a
// host, a level, and a note that stays null.
var benchLogs = recordstore.Kind{Name: "logs", Columns: []recordstore.Column{
	{Name: "msg", Type: recordstore.TypeString},
	{Name: "host", Type: recordstore.TypeString},
	{Name: "level", Type: recordstore.TypeInteger},
	{Name: "at", Type: recordstore.TypeDatetime},
	{Name: "note", Type: recordstore.TypeString},
}}

// benchRows reads a row count from the environment (default def).
func benchRows(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// openBenchLogs opens a store in a temp folder and appends n logs rows to
// stream "logs"; every 100 000th row's message holds "needle".
func openBenchLogs(b *testing.B, n int) *recordresults.Store {
	b.Helper()
	ctx := context.Background()
	st, err := recordresults.Open(ctx, filepath.Join(b.TempDir(), "records.sqlite"), recordresults.Options{SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if _, err := st.Backend().DeclareKind(ctx, benchLogs); err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const batch = 10_000
	for i := 0; i < n; i += batch {
		rows := make([]recordstore.Row, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			msg := fmt.Sprintf("request %d served by worker %d for user u%06x in %d ms", j, j%97, j*7919%1_000_003, j%500)
			if j%100_000 == 7 {
				msg = fmt.Sprintf("request %d hit the NEEDLE path", j)
			}
			rows = append(rows, recordstore.Row{"msg": msg, "host": fmt.Sprintf("web-%02d", j%16), "level": int64(j % 5), "at": at.Add(time.Duration(j) * time.Millisecond)})
		}
		if _, err := st.Backend().Append(ctx, "logs", "logs", rows); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// p50ms is the median of durations, in milliseconds.
func p50ms(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e6
}

// BenchmarkSearch pages a q search ("needle", matching 1 row in 100 000)
// through a stream of BENCH_SEARCH_ROWS rows (default 1 000 000), with the
// kind's search index and without it (a Reader whose search columns
// include one the index does not cover, so the query reads every row),
// alternately. Reports p50_ms of each and speedup = without / with.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	n := benchRows("BENCH_SEARCH_ROWS", 1_000_000)
	st := openBenchLogs(b, n)
	indexed := recordresults.NewReader(st.Backend())
	if err := indexed.SetSearchColumns(ctx, "logs", "msg"); err != nil {
		b.Fatal(err)
	}
	if err := indexed.CreateSearchIndex(ctx, "logs"); err != nil {
		b.Fatal(err)
	}
	plain := recordresults.NewReader(st.Backend())
	if err := plain.SetSearchColumns(ctx, "logs", "msg", "note"); err != nil {
		b.Fatal(err)
	}
	want := (n + 100_000 - 8) / 100_000
	search := func(rd *recordresults.Reader) time.Duration {
		start := time.Now()
		p, err := rd.Page(ctx, recordresults.Query{Stream: "logs", Text: "needle"})
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Rows) != want {
			b.Fatalf("found %d rows, want %d", len(p.Rows), want)
		}
		return d
	}
	var with, without []time.Duration
	b.ResetTimer()
	for range b.N {
		with = append(with, search(indexed))
		without = append(without, search(plain))
	}
	b.StopTimer()
	b.ReportMetric(p50ms(with), "p50_ms")
	b.ReportMetric(p50ms(without), "noindex_p50_ms")
	b.ReportMetric(p50ms(without)/p50ms(with), "speedup")
}

// BenchmarkExport exports a stream of BENCH_EXPORT_ROWS rows (default
// 200 000) in each format to io.Discard, alternating iteration by
// iteration with a scan of the same query (Reader.Rows, every row read
// and decoded, nothing written). Reports rows/s of the export and vs_scan
// = scan time / export time (1: exporting costs nothing on top of
// reading).
func BenchmarkExport(b *testing.B) {
	ctx := context.Background()
	n := benchRows("BENCH_EXPORT_ROWS", 200_000)
	st := openBenchLogs(b, n)
	rd := recordresults.NewReader(st.Backend())
	q := recordresults.Query{Stream: "logs"}
	for _, f := range []recordresults.Format{recordresults.FormatNDJSON, recordresults.FormatCSV, recordresults.FormatParquet} {
		b.Run("format="+string(f), func(b *testing.B) {
			var export, scan time.Duration
			for range b.N {
				start := time.Now()
				rows, err := rd.Export(ctx, io.Discard, q, f, nil)
				export += time.Since(start)
				if err != nil || rows != int64(n) {
					b.Fatalf("exported %d rows (%v), want %d", rows, err, n)
				}
				start = time.Now()
				count := 0
				for _, err := range rd.Rows(ctx, q) {
					if err != nil {
						b.Fatal(err)
					}
					count++
				}
				scan += time.Since(start)
				if count != n {
					b.Fatalf("scanned %d rows, want %d", count, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/export.Seconds(), "rows/s")
			b.ReportMetric(scan.Seconds()/export.Seconds(), "vs_scan")
		})
	}
}
