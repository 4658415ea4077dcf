// Benchmarks of the read side: a q search over a large stream with and
// without the search index, and exports per format against a scan of the
// same rows, each pair measured alternately in the same run.

package recordresults_test

import (
	"context"
	"database/sql"
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
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
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
func openBenchLogs(b *testing.B, n int) *records.Store {
	b.Helper()
	ctx := context.Background()
	st, err := records.Open(ctx, filepath.Join(b.TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
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

// plainSelect is the best plain code reading the rows of openBenchLogs'
// stream: one SELECT of every column in seq order (the table's primary
// key), streamed row by row on a connection of its own, each value
// scanned into a Go value. It returns how many rows it read.
func plainSelect(ctx context.Context, db *sql.DB) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT _seq, msg, host, level, at, note FROM logs ORDER BY _seq_stream, _seq`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		seq, level    int64
		msg, host, at string
		note          sql.NullString
		n             int
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &msg, &host, &level, &at, &note); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// openPlain opens the store's live file for plainSelect, read-only.
func openPlain(b *testing.B, st *records.Store) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+st.Backend().(*sqlite.Backend).LivePath()+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// BenchmarkExport exports a stream of BENCH_EXPORT_ROWS rows (default
// 200 000) in each format to io.Discard, alternating with plainSelect of
// the same rows (nothing written), the export first in even iterations
// and the SELECT first in odd ones (benchdata.Pair), in one process and so
// with the same GOMAXPROCS. Reports rows/s of the export, vs_raw = plain
// SELECT time / export time (1: the export costs no more than reading the
// rows with one SELECT) and vs_raw_p50, the median of the per-iteration
// ratios.
func BenchmarkExport(b *testing.B) {
	ctx := context.Background()
	n := benchRows("BENCH_EXPORT_ROWS", 200_000)
	st := openBenchLogs(b, n)
	db := openPlain(b, st)
	rd := recordresults.NewReader(st.Backend())
	q := recordresults.Query{Stream: "logs"}
	for _, f := range []recordresults.Format{recordresults.FormatNDJSON, recordresults.FormatCSV, recordresults.FormatParquet} {
		b.Run("format="+string(f), func(b *testing.B) {
			export := func() error {
				rows, err := rd.Export(ctx, io.Discard, q, f, nil)
				if err == nil && rows != int64(n) {
					err = fmt.Errorf("exported %d rows, want %d", rows, n)
				}
				return err
			}
			plain := func() error {
				count, err := plainSelect(ctx, db)
				if err == nil && count != n {
					err = fmt.Errorf("selected %d rows, want %d", count, n)
				}
				return err
			}
			var p benchdata.Pair
			b.ResetTimer()
			for i := range b.N {
				p.Run(b, i, export, plain)
			}
			b.StopTimer()
			o, _ := p.Total()
			b.ReportMetric(float64(n)*float64(b.N)/o.Seconds(), "rows/s")
			p.Report(b, "vs_raw")
		})
	}
}

// BenchmarkScanScale reads every row of a stream with Reader.Rows (a
// page at a time, as scan and export do) at two sizes, BENCH_SCALE_ROWS
// (default 1 000 000) and a tenth of it, alternately. A full read costs
// the same per row whatever the stream's size: each page seeks to its
// cursor. Reports rows/s at each size and scale = small rate / large rate,
// and fails when scale exceeds 1.3 (a page that walks the stream from its
// start again makes it grow with the size).
func BenchmarkScanScale(b *testing.B) {
	ctx := context.Background()
	large := benchRows("BENCH_SCALE_ROWS", 1_000_000)
	small := large / 10
	stores := map[int]*recordresults.Reader{}
	for _, n := range []int{small, large} {
		stores[n] = recordresults.NewReader(openBenchLogs(b, n).Backend())
	}
	read := func(n int) time.Duration {
		start := time.Now()
		count := 0
		for _, err := range stores[n].Rows(ctx, recordresults.Query{Stream: "logs"}) {
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		d := time.Since(start)
		if count != n {
			b.Fatalf("read %d rows, want %d", count, n)
		}
		return d
	}
	var ts, tl time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			ts += read(small)
			tl += read(large)
		} else {
			tl += read(large)
			ts += read(small)
		}
	}
	b.StopTimer()
	rs := float64(small) * float64(b.N) / ts.Seconds()
	rl := float64(large) * float64(b.N) / tl.Seconds()
	b.ReportMetric(rs, "rows/s_small")
	b.ReportMetric(rl, "rows/s_large")
	b.ReportMetric(rs/rl, "scale")
	if rs/rl > 1.3 {
		b.Errorf("reading %d rows runs at %.0f rows/s, %d rows at %.0f rows/s: %.2f× slower per row at the larger size (want ≤ 1.3×)", small, rs, large, rl, rs/rl)
	}
}
