// Helpers of the cache specs: a manual clock, caches in temp folders, raw
// reads of a cache file.

package cache_test

import (
	"context"
	"database/sql"
	"sort"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
)

var ctx = context.Background()

// clock is a manual clock in milliseconds.
type clock struct{ ms atomic.Int64 }

func newClock(ms int64) *clock {
	c := &clock{}
	c.ms.Store(ms)
	return c
}

func (c *clock) Now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *clock) Add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *clock) Set(ms int64)        { c.ms.Store(ms) }

// config is an enabled cache of worker in dir.
func config(dir, worker, cluster string) cache.Config {
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = true, dir, worker, cluster
	return cfg
}

// openCache opens an enabled cache with its loops off, closed at cleanup.
func openCache(dir, worker, cluster string, clk *clock, opts cache.Options) *cache.Cache {
	opts.NoLoops = true
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	c, err := cache.Open(ctx, config(dir, worker, cluster), opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// rawDB opens a cache file with a plain connection.
func rawDB(path string) *sql.DB {
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(db.Close)
	return db
}

// dump returns a cache's rows in key order, failing the spec on error.
func dump(c *cache.Cache) []cache.Entry {
	rows, err := c.List(ctx)
	Expect(err).NotTo(HaveOccurred())
	return rows
}

// shared keeps the cluster and global rows, sorted by key.
func shared(rows []cache.Entry) []cache.Entry {
	var out []cache.Entry
	for _, r := range rows {
		if r.Scope != cache.ScopeLocal {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// entry is a row for Apply.
func entry(key string, scope cache.Scope, value string, updated int64, origin string) cache.Entry {
	return cache.Entry{Key: key, Scope: scope, Value: value, SizeBytes: int64(len(value)),
		CreatedAtMS: updated, UpdatedAtMS: updated, OriginWorkerID: origin}
}

func i64(v int64) *int64 { return &v }

var _ = GinkgoT
