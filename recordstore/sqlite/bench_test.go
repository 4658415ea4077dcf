// Benchmarks of Append and Scan against a baseline measured in the same
// run: the same rows through prepared multi-row INSERTs in one transaction
// on a bare table with the same columns and pragmas (benchdata.Raw;
// vs_raw = raw time / our time, so 1.0 means "as fast as bare SQLite").
// Both sides run in one process, so with the same GOMAXPROCS; a size at
// which Append normalizes rows on a second goroutine also runs as
// procs=1, both sides pinned to one processor.

package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

func openBench(b *testing.B) (*sqlite.Backend, *benchdata.Raw, recordstore.Kind) {
	k := benchdata.Kind()
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "store", "records.sqlite"), sqlite.Options{SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if _, err := s.DeclareKind(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	if err := k.Validate(); err != nil {
		b.Fatal(err)
	}
	return s, benchdata.OpenRaw(b, k), k
}

// pair accumulates the interleaved timings of ours and the baseline.
type pair struct {
	ours, raw time.Duration
	ratios    []float64 // raw/ours of each iteration
}

// run times one iteration of both, alternating which goes first.
func (p *pair) run(b *testing.B, i int, ours, raw func() error) {
	timeIt := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var o, r time.Duration
	if i%2 == 0 {
		o, r = timeIt(ours), timeIt(raw)
	} else {
		r, o = timeIt(raw), timeIt(ours)
	}
	p.ours, p.raw = p.ours+o, p.raw+r
	p.ratios = append(p.ratios, r.Seconds()/o.Seconds())
}

// report writes rows/s (ours), vs_raw (total baseline time / total our
// time) and vs_raw_p50 (the median of the per-iteration ratios, which a
// busy machine disturbs less).
func (p *pair) report(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)/p.ours.Seconds(), "rows/s")
	b.ReportMetric(p.raw.Seconds()/p.ours.Seconds(), "vs_raw")
	slices.Sort(p.ratios)
	b.ReportMetric(p.ratios[len(p.ratios)/2], "vs_raw_p50")
}

// pinProcs sets GOMAXPROCS to procs (0: unchanged) until b ends.
func pinProcs(b *testing.B, procs int) {
	if procs > 0 {
		prev := runtime.GOMAXPROCS(procs)
		b.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	}
}

// BenchmarkAppend appends batches of rows=N to one stream; the baseline
// inserts the same rows, normalized beforehand, into the bare table. The
// two alternate inside each iteration. rows=10000/procs=1 is rows=10000
// with GOMAXPROCS 1 for both sides: Append normalizes a large append on a
// goroutine of its own while it inserts, which a second processor
// overlaps and the baseline (one goroutine) cannot use.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name     string
		n, procs int
	}{{"rows=1", 1, 0}, {"rows=100", 100, 0}, {"rows=10000", 10000, 0}, {"rows=10000/procs=1", 10000, 1}} {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			pinProcs(b, c.procs)
			ctx := context.Background()
			s, raw, k := openBench(b)
			rows := benchdata.Rows(n)
			vals := benchdata.Normalize(b, &k, rows)
			var p pair
			ours := func() error {
				_, err := s.Append(ctx, "bench", "bench", rows)
				return err
			}
			base := func() error { return raw.InsertAll(ctx, vals) }
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.run(b, i, ours, base)
			}
			p.report(b, n*b.N)
		})
	}
}

// BenchmarkScan reads a 10000-row stream with Scan; the baseline selects
// the same rows from the bare table.
func BenchmarkScan(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	s, raw, k := openBench(b)
	rows := benchdata.Rows(n)
	if _, err := s.Append(ctx, "bench", "bench", rows); err != nil {
		b.Fatal(err)
	}
	if err := raw.InsertAll(ctx, benchdata.Normalize(b, &k, rows)); err != nil {
		b.Fatal(err)
	}
	var p pair
	ours := func() error {
		recs, err := s.Scan(ctx, "bench", recordstore.ScanOptions{})
		if err == nil && len(recs) != n {
			err = fmt.Errorf("scan: %d rows", len(recs))
		}
		return err
	}
	base := func() error {
		got, err := raw.ScanAll(ctx)
		if err == nil && got != n {
			err = fmt.Errorf("raw scan: %d rows", got)
		}
		return err
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.run(b, i, ours, base)
	}
	p.report(b, n*b.N)
}

// BenchmarkAppendBatch applies one one-row batch per iteration with
// AppendBatch, as an owner applies a producer's spooled append (a ledger
// lookup and record, the epoch check, the entry's savepoint, the stream's
// row). The baseline inserts the same row into the bare table in a
// transaction of its own; the two alternate. With gap=2ms each of them
// follows an idle pause, as an owner's work between two appends of one
// producer does: on a virtual machine whose idle processor sleeps, the
// same statements then take several times longer, which is what the
// multi-process latencies pay. Reported: p50_us and raw_p50_us, and
// vs_raw (raw p50 / our p50).
func BenchmarkAppendBatch(b *testing.B) {
	for _, gap := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("gap=%v", gap), func(b *testing.B) {
			ctx := context.Background()
			s, raw, k := openBench(b)
			vals := benchdata.Normalize(b, &k, benchdata.Rows(1))
			producer := recordstore.Producer{Instance: "0123456789abcdef", PID: 1, Host: "bench"}
			ours := func() error {
				producer.Seq++
				res, err := s.AppendBatch(ctx, recordstore.Batch{ID: fmt.Sprintf("%032x", producer.Seq), Producer: producer,
					Created: time.Now(), Schemas: []recordstore.Kind{k},
					Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "bench", Kind: k.Name, Rows: vals}}})
				if err == nil {
					err = res[0].Err()
				}
				return err
			}
			base := func() error { return raw.InsertAll(ctx, vals) }
			timeIt := func(f func() error) time.Duration {
				time.Sleep(gap)
				t0 := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			o, r := make([]time.Duration, b.N), make([]time.Duration, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					o[i], r[i] = timeIt(ours), timeIt(base)
				} else {
					r[i], o[i] = timeIt(base), timeIt(ours)
				}
			}
			b.StopTimer()
			slices.Sort(o)
			slices.Sort(r)
			b.ReportMetric(float64(o[b.N/2].Nanoseconds())/1e3, "p50_us")
			b.ReportMetric(float64(r[b.N/2].Nanoseconds())/1e3, "raw_p50_us")
			b.ReportMetric(r[b.N/2].Seconds()/o[b.N/2].Seconds(), "vs_raw")
		})
	}
}
