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
	"github.com/fb46ecde/records/recordstoretest/benchdata"
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
// election, kinds) and a first read (Streams), against the baseline, a
// plain read-only SQLite connection and one query (rawOpenRead) on
// another store. Every iteration opens two stores this process never
// opened, one for each side (a reopen would skip the identity read),
// ours first in even iterations and the baseline first in odd ones, then
// closes ours (CloseStore, untimed), so that neither side always follows
// a close's fsyncs. p50_ms is ours, raw_p50_ms the baseline's, vs_raw =
// raw p50 / our p50; close_p50_ms is the p50 of the untimed CloseStore
// (the owner's final drain, state file, unlock and the backend's close);
// identity_reads/op, the share of opens that read the store's identity
// (1: every open is a first one); fsync_ms, the disk's bare fsync time
// (an open elects an owner, which fsyncs its folder).
func BenchmarkFleetOpen(b *testing.B) {
	root, keys := benchRoot(b, 2*b.N)
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var reads int
	f.SetIdentityRead(func(string) { reads++ })
	ctx := context.Background()
	var p benchdata.Pair
	var closes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[2*i]
		other, _ := f.Path(keys[2*i+1])
		ours := func() error {
			l, err := f.Acquire(ctx, k)
			if err != nil {
				return err
			}
			_, err = l.Store().Backend().Streams(ctx, "")
			l.Release()
			return err
		}
		p.Run(b, i, ours, func() error { return rawOpenRead(other) })
		b.StopTimer()
		t2 := time.Now()
		if err := f.CloseStore(ctx, k); err != nil {
			b.Fatal(err)
		}
		closes = append(closes, time.Since(t2))
		b.StartTimer()
	}
	b.StopTimer()
	o, r := p50(p.Ours), p50(p.Base)
	b.ReportMetric(float64(o.Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(r.Microseconds())/1000, "raw_p50_ms")
	b.ReportMetric(float64(r)/float64(o), "vs_raw")
	b.ReportMetric(float64(p50(closes).Microseconds())/1000, "close_p50_ms")
	b.ReportMetric(float64(reads)/float64(b.N), "identity_reads/op")
	benchdata.ReportFsync(b, root)
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

// walkStat is the plain code listing the stores of a root that trusts its
// layout: a filepath.WalkDir of the tree and an lstat of each ".db" file
// (its size, as List reports). It returns how many it found.
func walkStat(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".db") {
			return err
		}
		if _, err := os.Lstat(p); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// openEach is the plain code listing the stores of a root with the answer
// List gives (which key each file records, so that a misplaced file shows):
// walkStat's walk, and for each ".db" file a read-only SQLite connection,
// the identity row read, closed. It returns how many files recorded a key.
func openEach(ctx context.Context, root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".db") {
			return err
		}
		if _, err := os.Lstat(p); err != nil {
			return err
		}
		db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
		if err != nil {
			return err
		}
		defer db.Close()
		var key string
		if err := db.QueryRowContext(ctx, `SELECT key FROM `+fleet.IdentityTable).Scan(&key); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		n++
		return db.Close()
	})
	return n, err
}

// BenchmarkFleetList: List of 10,000 stores, warm (the root's identity
// index known: no store file opened, each file's stat checked against the
// index) and cold (the index removed first, untimed: every identity read
// from the file's pages, as the first list of a root), against two plain
// listings of the same tree: openEach, the code a user would write for
// the same answer (a SQLite open and the identity row per file), and
// walkStat, a walk that trusts the layout and reads no identity (the
// floor of any list that reports sizes). The four run in one process (the
// same GOMAXPROCS), in an order that rotates from one iteration to the
// next. ms/list is the warm list's p50, cold_ms the cold one's,
// open_each_ms and walk_stat_ms the baselines'; vs_open_each = open_each
// p50 / warm p50 and vs_open_each_cold = open_each p50 / cold p50 (the
// same answer: above 1 List is faster), vs_walk_stat = walk_stat p50 /
// warm p50 (the floor: below 1 by what checking the names and the index
// costs); identity_reads/op, the files a warm list opened, must be 0.
func BenchmarkFleetList(b *testing.B) {
	root := sharedListRoot(b)
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	const stores = 10000
	list := func() error {
		l, err := f.List(ctx, fleet.ListOptions{})
		if err == nil && (len(l.Stores) != stores || len(l.Skipped) != 0) {
			err = fmt.Errorf("listed %d stores, skipped %d", len(l.Stores), len(l.Skipped))
		}
		return err
	}
	counted := func(what string, count func() (int, error)) func() error {
		return func() error {
			n, err := count()
			if err == nil && n != stores {
				err = fmt.Errorf("%s found %d stores", what, n)
			}
			return err
		}
	}
	reads, warmReads := 0, 0
	f.SetInspected(func(string) { reads++ })
	var warm, cold, walk, each []time.Duration
	steps := []func() error{
		func() error { // warm list: the index is there (the first step writes it)
			before := reads
			t0 := time.Now()
			err := list()
			warm = append(warm, time.Since(t0))
			warmReads += reads - before
			return err
		},
		func() error { // cold list
			b.StopTimer()
			if err := os.RemoveAll(filepath.Join(root, fleet.IndexName)); err != nil {
				return err
			}
			b.StartTimer()
			t0 := time.Now()
			err := list()
			cold = append(cold, time.Since(t0))
			return err
		},
		func() error {
			t0 := time.Now()
			err := counted("walkStat", func() (int, error) { return walkStat(root) })()
			walk = append(walk, time.Since(t0))
			return err
		},
		func() error {
			t0 := time.Now()
			err := counted("openEach", func() (int, error) { return openEach(ctx, root) })()
			each = append(each, time.Since(t0))
			return err
		},
	}
	if err := list(); err != nil { // writes the index if missing
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range steps {
			// Whatever ran before it, the warm list finds the index: the
			// list before the loop wrote it, and every cold list does.
			if err := steps[(i+j)%len(steps)](); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	w, c, ws, oe := p50(warm), p50(cold), p50(walk), p50(each)
	b.ReportMetric(ms(w), "ms/list")
	b.ReportMetric(ms(c), "cold_ms")
	b.ReportMetric(ms(oe), "open_each_ms")
	b.ReportMetric(ms(ws), "walk_stat_ms")
	b.ReportMetric(float64(oe)/float64(w), "vs_open_each")
	b.ReportMetric(float64(oe)/float64(c), "vs_open_each_cold")
	b.ReportMetric(float64(ws)/float64(w), "vs_walk_stat")
	b.ReportMetric(float64(warmReads)/float64(b.N), "identity_reads/op")
}
