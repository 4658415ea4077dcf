// Benchmarks: one exchange page from a small and a large cache (their
// ratio), the flush against a raw UPSERT loop in one transaction (their
// ratio), and Get from memory and from the file.

package cache_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// benchCache opens an enabled cache with its loops off.
func benchCache(b *testing.B, dir string, maxMem int) *cache.Cache {
	b.Helper()
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.MaxMemoryEntries = true, dir, "w1", maxMem
	c, err := cache.Open(context.Background(), cfg, cache.Options{NoLoops: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// fill writes n global rows of worker w1 into the cache file of dir with
// one INSERT ... SELECT over a recursive CTE (ten rows per updated_at_ms),
// before the cache that reads them is opened.
func fill(b *testing.B, dir string, n int) {
	b.Helper()
	c := benchCache(b, dir, 0)
	if err := c.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "w1-cache.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO cache_entries (key, scope, value, size_bytes, created_at_ms, updated_at_ms, expires_at_ms, origin_worker_id)
SELECT printf('k%09d', i), 'global', '{"v": 1}', 8, 1000 + i / 10, 1000 + i / 10, NULL, 'w1' FROM s`, n)
	if err != nil {
		b.Fatal(err)
	}
}

func p50(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// BenchmarkExchangePage: the p50 of one 500-row page from the middle of a
// cache of 10k rows and of 1M rows, and their ratio (the spec: a page
// costs about its own size however large the cache is; target <= 2).
func BenchmarkExchangePage(b *testing.B) {
	sizes := []int{10_000, 1_000_000}
	caches := make([]*cache.Cache, len(sizes))
	for i, n := range sizes {
		dir := b.TempDir()
		fill(b, dir, n)
		caches[i] = benchCache(b, dir, 0)
	}
	times := make([][]time.Duration, len(sizes))
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for i, c := range caches {
			mid := &cache.Cursor{MS: int64(1000 + sizes[i]/20), Key: ""}
			start := time.Now()
			p, err := c.Changes(context.Background(), cache.ChangesQuery{Scopes: []cache.Scope{cache.ScopeCluster, cache.ScopeGlobal}, After: mid, Limit: 500})
			times[i] = append(times[i], time.Since(start))
			if err != nil || len(p.Rows) != 500 {
				b.Fatalf("page: %v, %d rows", err, len(p.Rows))
			}
		}
	}
	b.StopTimer()
	small, large := p50(times[0]), p50(times[1])
	b.ReportMetric(float64(small.Microseconds())/1000, "p50-10k-ms")
	b.ReportMetric(float64(large.Microseconds())/1000, "p50-1M-ms")
	b.ReportMetric(float64(large)/float64(small), "ratio-1M/10k")
}

// rawUpsert is the baseline of BenchmarkCacheFlush: a file of the cache's
// DDL written by one UPSERT a row (the LWW condition in its WHERE), in one
// transaction. With reseq, the UPSERT also moves an overwritten row to a
// new rowid above every other, as the engine re-appends a replaced row at
// the stream's next seq.
type rawUpsert struct {
	db    *sql.DB
	reseq bool
	next  int64 // the next rowid (reseq)
}

func openRawUpsert(b *testing.B, reseq bool) *rawUpsert {
	b.Helper()
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "raw.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	for _, ddl := range append([]string{dbfiles.CacheEntriesDDL}, dbfiles.CacheIndexDDL...) {
		if _, err := db.Exec(ddl); err != nil {
			b.Fatal(err)
		}
	}
	return &rawUpsert{db: db, reseq: reseq, next: 1}
}

// write upserts keys k00000... with the value and version of iteration it.
func (r *rawUpsert) write(b *testing.B, n, it int) {
	b.Helper()
	tx, err := r.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	col, param, set := "", "", ""
	if r.reseq {
		col, param, set = ", rowid", ", ?", "rowid = ?9, "
	}
	st, err := tx.Prepare(`INSERT INTO cache_entries (key, scope, value, size_bytes, created_at_ms, updated_at_ms, expires_at_ms, origin_worker_id` + col + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?` + param + `) ON CONFLICT (key) DO UPDATE SET ` + set + `scope = excluded.scope, value = excluded.value,
size_bytes = excluded.size_bytes, created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms,
expires_at_ms = excluded.expires_at_ms, origin_worker_id = excluded.origin_worker_id
WHERE excluded.updated_at_ms > cache_entries.updated_at_ms
   OR (excluded.updated_at_ms = cache_entries.updated_at_ms AND excluded.origin_worker_id < cache_entries.origin_worker_id)`)
	if err != nil {
		b.Fatal(err)
	}
	for k := range n {
		v := fmt.Sprintf(`{"it": %d}`, it)
		args := []any{fmt.Sprintf("k%05d", k), "global", v, len(v), 1, int64(it + 1), nil, "w1"}
		if r.reseq {
			args = append(args, r.next)
			r.next++
		}
		if _, err := st.Exec(args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCacheFlush: dirty entries per second written by Flush, against
// a raw UPSERT loop (the same LWW condition) in one transaction on a file
// of the same DDL, in the same run, and their ratio (target >= 0.8). A
// second baseline also moves each overwritten row to a new rowid, as the
// engine does (a replaced row gets the stream's next seq): the flush's
// ratio to it is the cost of everything but that move.
func BenchmarkCacheFlush(b *testing.B) {
	const n = 5000
	c := benchCache(b, b.TempDir(), 10000)
	raw, reseq := openRawUpsert(b, false), openRawUpsert(b, true)
	var cacheTime, rawTime, reseqTime time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		for k := range n {
			if err := c.Set(context.Background(), fmt.Sprintf("k%05d", k), fmt.Sprintf(`{"it": %d}`, it), cache.ScopeGlobal, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		// The pprof labels split a -cpuprofile between the three parts
		// (go tool pprof -tags): CPU time, unlike the wall clock, hardly
		// depends on what else the machine runs.
		start := time.Now()
		pprof.Do(context.Background(), pprof.Labels("part", "flush"), func(context.Context) {
			if err := c.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
		cacheTime += time.Since(start)

		start = time.Now()
		pprof.Do(context.Background(), pprof.Labels("part", "upsert"), func(context.Context) { raw.write(b, n, it) })
		rawTime += time.Since(start)

		start = time.Now()
		pprof.Do(context.Background(), pprof.Labels("part", "upsert-reseq"), func(context.Context) { reseq.write(b, n, it) })
		reseqTime += time.Since(start)
	}
	b.StopTimer()
	cacheRate := float64(n*b.N) / cacheTime.Seconds()
	rawRate := float64(n*b.N) / rawTime.Seconds()
	reseqRate := float64(n*b.N) / reseqTime.Seconds()
	b.ReportMetric(cacheRate, "flush-entries/s")
	b.ReportMetric(rawRate, "upsert-entries/s")
	b.ReportMetric(cacheRate/rawRate, "ratio-flush/upsert")
	b.ReportMetric(reseqRate, "upsert-reseq-entries/s")
	b.ReportMetric(cacheRate/reseqRate, "ratio-flush/upsert-reseq")
}

// BenchmarkCacheGet: a Get answered from memory, and one answered from the
// file (a memory layer of size 0).
func BenchmarkCacheGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		mem  int
	}{{"memory", 10000}, {"file", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := benchCache(b, b.TempDir(), bc.mem)
			ctx := context.Background()
			for k := range 1000 {
				if err := c.Set(ctx, fmt.Sprintf("k%04d", k), `{"v": 1}`, cache.ScopeLocal, 0); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, ok, err := c.Get(ctx, fmt.Sprintf("k%04d", i%1000)); err != nil || !ok {
					b.Fatalf("get: %v %v", ok, err)
				}
			}
		})
	}
}
