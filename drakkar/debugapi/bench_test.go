// Benchmarks of the debug API (docs/performance.md, "Debug API"):
//
//   - BenchmarkDatabasesPage: the Databases page over 2,000 sealed files
//     with meta files, p50 ms, against a variant that also opens each
//     sealed file (ratio ≤ 0.1), alternating in the same run.
//   - BenchmarkTrace: trace with history=1 over 50 sealed files
//     (DEBUGAPI_BENCH_TRACE_EVENTS events each, default 100k), ms per call.
//   - BenchmarkDownloadLive (bench_live_test.go): MB/s of download-live's
//     snapshot of a live file (DEBUGAPI_BENCH_LIVE_MB, default 200) while
//     events are recorded, against a cold `cp` of the same file (ratio
//     ≥ 0.5), and against a warm one.

package debugapi_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/debugapi"
)

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchGet answers one GET on h, failing b on a status other than 200;
// it returns the body.
func benchGet(b *testing.B, h http.Handler, target string) []byte {
	req := httptest.NewRequest(http.MethodGet, "http://worker"+target, nil)
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	if rr.Code != 200 {
		b.Fatalf("%s: %d %s", target, rr.Code, rr.Body.String())
	}
	return rr.Body.Bytes()
}

// countingWriter is a ResponseWriter that only counts the body's bytes.
type countingWriter struct {
	h    http.Header
	code int
	n    int64
}

func (c *countingWriter) Header() http.Header         { return c.h }
func (c *countingWriter) WriteHeader(code int)        { c.code = code }
func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// benchStream answers one GET on h without keeping the body; it returns
// the body's size.
func benchStream(b *testing.B, h http.Handler, target string) int64 {
	w := &countingWriter{h: http.Header{}, code: 200}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://worker"+target, nil))
	if w.code != 200 {
		b.Fatalf("%s: %d", target, w.code)
	}
	return w.n
}

// buildSealed writes one sealed-like recorder file at path with n events
// (INSERT … SELECT over a recursive CTE): one in ten is a task_started
// whose metadata lists a source offset, the others task_completed rows.
func buildSealed(path, worker string, n int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := append([]string{"PRAGMA journal_mode=DELETE", "PRAGMA synchronous=OFF", "BEGIN"}, dbfiles.RecorderTableDDL...)
	stmts = append(stmts, dbfiles.RecorderIndexDDL...)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	if _, err := db.Exec(`INSERT INTO worker_config (id, worker_name, cluster_name, created_at, created_at_dt)
		VALUES (1, ?, 'search hot', 1760342400.0, '2025-10-13 08:00:00.000')`, worker); err != nil {
		return err
	}
	if _, err := db.Exec(`INSERT INTO events (ts, dt, event, partition, offset, task_id, metadata, origin)
		WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ? - 1)
		SELECT 1760342400.0 + i * 0.01, '2025-10-13 08:00:00.000',
		  CASE WHEN i % 10 = 0 THEN 'task_started' ELSE 'task_completed' END,
		  i % 16, i, 't-' || i,
		  CASE WHEN i % 10 = 0 THEN '{"queue_wait_ms":1,"source_offsets":[{"offset":' || (i + 1000000) || ',"partition":' || (i % 16) || '}]}'
		       ELSE '{"exit":0}' END,
		  'kafka' FROM s`, n); err != nil {
		return err
	}
	_, err = db.Exec("COMMIT")
	return err
}

// copyFile copies src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// p50 is the median of ds in milliseconds.
func p50(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Microseconds()) / 1000
}

func BenchmarkDatabasesPage(b *testing.B) {
	const files = 2000
	shared := b.TempDir()
	hist := filepath.Join(shared, "history", "search_hot")
	if err := os.MkdirAll(hist, 0o700); err != nil {
		b.Fatal(err)
	}
	tmpl := filepath.Join(b.TempDir(), "template.db")
	if err := buildSealed(tmpl, "w", 10); err != nil {
		b.Fatal(err)
	}
	first := time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC)
	meta, err := dbfiles.EncodeMeta(dbfiles.Meta{Worker: "w", Instance: "0123456789abcdef", Cluster: "search hot",
		FirstEventTS: &first, LastEventTS: &first, SealedAt: first, SizeBytes: 4096,
		Tables: map[string]int64{"events": 10, "worker_config": 1, "worker_state": 0}, EventTypes: map[string]int64{"task_started": 1}})
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for i := range files {
		name := dbfiles.RecorderFileName(fmt.Sprintf("w%d", i%10), first.Add(time.Duration(i)*time.Minute))
		if err := copyFile(tmpl, filepath.Join(hist, name)); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hist, dbfiles.MetaFileName(name)), meta, 0o600); err != nil {
			b.Fatal(err)
		}
		names = append(names, name)
	}
	c := debugapi.DefaultConfig()
	c.StorageDir, c.SharedDir, c.WorkerName, c.ClusterName = shared, shared, "w1", "search hot"
	h, err := debugapi.New(debugapi.Options{Config: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	// The variant opens every sealed file as a page that reads each file
	// would (immutable=1, one count of its events).
	opening := func() {
		benchGet(b, h, "/api/v1/debug/databases")
		for _, n := range names {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(hist, n)+"?mode=ro&immutable=1")
			if err != nil {
				b.Fatal(err)
			}
			var k int
			if err := db.QueryRow("SELECT count(*) FROM events").Scan(&k); err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
		}
	}
	var page, open []time.Duration
	b.ResetTimer()
	for i := range b.N {
		steps := []func(){
			func() {
				t := time.Now()
				body := benchGet(b, h, "/api/v1/debug/databases")
				page = append(page, time.Since(t))
				if i == 0 && !strings.Contains(string(body), `"meta":{`) {
					b.Fatal("no meta in the page")
				}
			},
			func() { t := time.Now(); opening(); open = append(open, time.Since(t)) },
		}
		if i%2 == 1 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, s := range steps {
			s()
		}
	}
	b.StopTimer()
	b.ReportMetric(p50(page), "p50_ms")
	b.ReportMetric(p50(open), "p50_open_each_ms")
	b.ReportMetric(p50(page)/p50(open), "ratio")
}

func BenchmarkTrace(b *testing.B) {
	const files = 50
	events := envInt("DEBUGAPI_BENCH_TRACE_EVENTS", 100_000)
	shared := b.TempDir()
	hist := filepath.Join(shared, "history", "search_hot")
	if err := os.MkdirAll(hist, 0o700); err != nil {
		b.Fatal(err)
	}
	tmpl := filepath.Join(b.TempDir(), "template.db")
	if err := buildSealed(tmpl, "w", events); err != nil {
		b.Fatal(err)
	}
	first := time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC)
	for i := range files {
		if err := copyFile(tmpl, filepath.Join(hist, dbfiles.RecorderFileName("w", first.Add(time.Duration(i)*time.Hour)))); err != nil {
			b.Fatal(err)
		}
	}
	c := debugapi.DefaultConfig()
	c.StorageDir, c.SharedDir, c.WorkerName, c.ClusterName = shared, shared, "w1", "search hot"
	c.TraceHistoryMaxSeconds = time.Hour // measure every file, not the cut-off
	h, err := debugapi.New(debugapi.Options{Config: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	target := fmt.Sprintf("/api/v1/debug/trace?partition=%d&offset=%d&history=1", 40%16, 40)
	var found int
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var ans struct {
			Events        []map[string]any `json:"events"`
			FilesSearched int              `json:"files_searched"`
		}
		if err := json.Unmarshal(benchGet(b, h, target), &ans); err != nil {
			b.Fatal(err)
		}
		if ans.FilesSearched != files {
			b.Fatalf("searched %d files", ans.FilesSearched)
		}
		found = len(ans.Events)
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/trace")
	b.ReportMetric(float64(found), "rows")
	b.ReportMetric(float64(events), "events/file")
}
