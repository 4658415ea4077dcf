// Benchmarks of the fleet: first open + first read of a store, churn across
// 10,000 tenants with max_open 256, and listing 10,000 stores. Each reports
// a ratio against a baseline measured in the same run (see
// docs/performance.md, "Fleet").

package fleet_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
)

// benchRoot makes a root of n tenant stores "b00000"...: one provisioned,
// the others copies of it whose identity row is rewritten (a provision
// each would take minutes; the files are the same).
func benchRoot(b *testing.B, n int) (string, []fleet.Key) {
	b.Helper()
	return benchRootIn(b, b.TempDir(), n)
}

// benchRootIn is benchRoot in the folder dir.
func benchRootIn(b *testing.B, dir string, n int) (string, []fleet.Key) {
	b.Helper()
	root := filepath.Join(dir, "fleet")
	if err := os.Mkdir(root, 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	keys := make([]fleet.Key, n)
	for i := range keys {
		if keys[i], err = fleet.TenantKey(fmt.Sprintf("b%05d", i)); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := f.Provision(ctx, keys[0]); err != nil {
		b.Fatal(err)
	}
	first, _ := f.Path(keys[0])
	data, err := os.ReadFile(first)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range keys[1:] {
		p, _ := f.Path(k)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
		db, err := sql.Open("sqlite", p)
		if err != nil {
			b.Fatal(err)
		}
		_, err = db.Exec(`UPDATE `+fleet.IdentityTable+` SET key = ?`, k.String())
		db.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	return root, keys
}

// rawOpenRead is the baseline of a first open + read: a plain SQLite
// connection on the file and one query.
func rawOpenRead(path string) error {
	db, err := rawOpen(path)
	if err != nil {
		return err
	}
	return db.Close()
}

// rawOpen opens a plain read-only SQLite connection on the file and runs
// one query on it.
func rawOpen(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func p50(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// BenchmarkFleetOpen: the first Acquire of a store (identity, owner
// election, kinds) and a first read (Streams), then its close (untimed),
// alternating with the baseline on another store. p50_ms is ours,
// raw_p50_ms the baseline's, vs_raw = raw / ours; close_p50_ms is the
// p50 of the untimed CloseStore (the owner's final drain, state file,
// unlock and the backend's close); identity_reads/op, the share of opens
// that read the store's identity (a reopen of a store unchanged since this
// process closed it skips it; the 64 keys are reopened in turn).
func BenchmarkFleetOpen(b *testing.B) {
	root, keys := benchRoot(b, 64)
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var reads int
	f.SetIdentityRead(func(string) { reads++ })
	ctx := context.Background()
	var ours, raw, closes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i%len(keys)]
		t0 := time.Now()
		l, err := f.Acquire(ctx, k)
		if err == nil {
			_, err = l.Store().Backend().Streams(ctx, "")
			l.Release()
		}
		ours = append(ours, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t2 := time.Now()
		if err := f.CloseStore(ctx, k); err != nil {
			b.Fatal(err)
		}
		closes = append(closes, time.Since(t2))
		other, _ := f.Path(keys[(i+len(keys)/2)%len(keys)])
		t1 := time.Now()
		if err := rawOpenRead(other); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(t1))
		b.StartTimer()
	}
	b.StopTimer()
	o, r := p50(ours), p50(raw)
	b.ReportMetric(float64(o.Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(r.Microseconds())/1000, "raw_p50_ms")
	b.ReportMetric(float64(r)/float64(o), "vs_raw")
	b.ReportMetric(float64(p50(closes).Microseconds())/1000, "close_p50_ms")
	b.ReportMetric(float64(reads)/float64(b.N), "identity_reads/op")
}

// rssBytes is this process's resident set size.
func rssBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc/self/statm")
	}
	fields := strings.Fields(string(data))
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// BenchmarkFleetChurn: 10,000 tenants touched at random (Acquire, a read,
// Release) with max_open 256 and no min_residency, the sweeper and the
// eviction after each open running. Reports opens/s, the stores open at
// the end and kb_per_open_store: the RSS grown from the start of the churn
// to its end, over the stores open then. The baseline, measured first in
// the same process and kept open through the churn: raw_kb_per_conn, the
// RSS grown by 256 bare read-only SQLite connections on other stores of
// the root, each with one query (rawOpenRead's); vs_raw = raw / ours.
func BenchmarkFleetChurn(b *testing.B) {
	root, keys := benchRoot(b, 10000)
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, MaxOpen: 256, MinResidency: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	const rawConns = 256
	rssRaw := rssBytes(b)
	for _, k := range keys[len(keys)-rawConns:] { // never touched by the churn
		p, _ := f.Path(k)
		db, err := rawOpen(p)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
	}
	rss0 := rssBytes(b)
	rawKB := float64(rss0-rssRaw) / 1024 / rawConns
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		l, err := f.Acquire(ctx, keys[rng.IntN(len(keys)-rawConns)])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Store().Backend().Streams(ctx, ""); err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	s := f.Stats()
	b.ReportMetric(float64(s.Opens)/elapsed.Seconds(), "opens/s")
	b.ReportMetric(float64(s.Open), "open_at_end")
	b.ReportMetric(rawKB, "raw_kb_per_conn")
	if s.Open > 0 {
		ours := float64(rssBytes(b)-rss0) / 1024 / float64(s.Open)
		b.ReportMetric(ours, "kb_per_open_store")
		b.ReportMetric(rawKB/ours, "vs_raw")
	}
}

// listRoot is the root of 10,000 stores BenchmarkFleetList lists, made
// once per test process (it takes a minute or two) and removed by
// TestMain: -count 3 lists one tree three times.
var listRoot struct {
	sync.Mutex
	dir string
}

// sharedListRoot returns listRoot's folder, making it on first use.
func sharedListRoot(b *testing.B) string {
	listRoot.Lock()
	defer listRoot.Unlock()
	if listRoot.dir == "" {
		dir, err := os.MkdirTemp("", "fleet-list-bench-")
		if err != nil {
			b.Fatal(err)
		}
		root, _ := benchRootIn(b, dir, 10000)
		listRoot.dir = root
	}
	return listRoot.dir
}

// removeListRoot removes listRoot's folder, if made.
func removeListRoot() {
	if listRoot.dir != "" {
		_ = os.RemoveAll(filepath.Dir(listRoot.dir))
	}
}

// BenchmarkFleetList: List of 10,000 stores with the root's identity index
// warm (no store file opened: each file's stat is checked against the
// index), alternating with the baseline in the same run, a bare
// filepath.WalkDir of the same tree that stats nothing and opens nothing
// (the floor of any list that must find the files). ms/list is ours,
// walk_ms the baseline's, vs_walk = walk / ours; identity_reads/op must be
// 0. cold_ms is one List with the index removed first (every identity
// read, as the first list of a root does), timed once before the loop.
func BenchmarkFleetList(b *testing.B) {
	root := sharedListRoot(b)
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	list := func() {
		l, err := f.List(ctx, fleet.ListOptions{})
		if err != nil || len(l.Stores) != 10000 || len(l.Skipped) != 0 {
			b.Fatalf("listed %d stores, skipped %d: %v", len(l.Stores), len(l.Skipped), err)
		}
	}
	walk := func() {
		n := 0
		if err := filepath.WalkDir(root, func(string, os.DirEntry, error) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, fleet.IndexName)); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	list()
	cold := time.Since(t0)
	reads := 0
	f.SetInspected(func(string) { reads++ })
	var ours, raw time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		t1 := time.Now()
		walk()
		raw += time.Since(t1)
		b.StartTimer()
		t0 := time.Now()
		list()
		ours += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Microseconds())/1000/float64(b.N), "ms/list")
	b.ReportMetric(float64(raw.Microseconds())/1000/float64(b.N), "walk_ms")
	b.ReportMetric(float64(raw)/float64(ours), "vs_walk")
	b.ReportMetric(float64(cold.Microseconds())/1000, "cold_ms")
	b.ReportMetric(float64(reads)/float64(b.N), "identity_reads/op")
}
