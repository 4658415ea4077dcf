// Specs of the cache API: modes, the file, Get/Set/Delete, the memory
// layer, flush and cleanup.

package cache_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
)

// storedText is a CREATE statement as sqlite_master keeps it.
func storedText(ddl string) string {
	s := strings.Replace(ddl, " IF NOT EXISTS", "", 1)
	return strings.TrimSuffix(s, ";")
}

var _ = Describe("The cache", func() {
	var (
		dir string
		clk *clock
	)
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		clk = newClock(1_000_000)
	})

	DescribeTable("modes: a cache whose engine is off creates nothing and keeps nothing",
		func(enabled bool, storage bool, warns bool) {
			var logs bytes.Buffer
			cfg := config(filepath.Join(dir, "s"), "w1", "")
			cfg.Enabled = enabled
			if !storage {
				cfg.StorageDir = ""
			}
			c, err := cache.Open(ctx, cfg, cache.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Set(ctx, "k", `1`, cache.ScopeGlobal, 0)).To(Succeed())
			_, ok, err := c.Get(ctx, "k")
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse())
			Expect(c.Engine()).To(BeFalse())
			Expect(c.CardFeatures().Cache).To(BeNil())
			_, err = c.List(ctx)
			Expect(err).To(MatchError(cache.ErrOff))
			Expect(c.Close(ctx)).To(Succeed())
			Expect(filepath.Join(dir, "s")).NotTo(BeAnExistingFile())
			Expect(strings.Contains(logs.String(), "cache_engine_disabled_no_storage_dir")).To(Equal(warns))
		},
		Entry("cache.enabled false (the default)", false, true, false),
		Entry("enabled with storage.dir ''", true, false, true),
	)

	It("creates <worker>-cache.db with the spec's DDL verbatim, 0600, in WAL, and never seals it", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "k", `{"a": 1}`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		path := filepath.Join(dir, "w1-cache.db")
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		db := rawDB(path)
		var sqlText, mode string
		Expect(db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'cache_entries'`).Scan(&sqlText)).To(Succeed())
		Expect(sqlText).To(Equal(storedText(dbfiles.CacheEntriesDDL)))
		for _, ix := range dbfiles.CacheIndexDDL {
			name := strings.Fields(ix)[5]
			Expect(db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = ?`, name).Scan(&sqlText)).To(Succeed())
			Expect(sqlText).To(Equal(storedText(ix)))
		}
		Expect(db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)).To(Succeed())
		Expect(mode).To(Equal("wal"))
	})

	It("keeps a Set in memory until the flush writes it, with its size, origin and times", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "k", `{"a": "é"}`, cache.ScopeCluster, time.Minute)).To(Succeed())
		e, ok, err := c.Get(ctx, "k")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(e.Value).To(Equal(`{"a": "é"}`))
		Expect(dump(c)).To(BeEmpty())
		Expect(c.Dirty()).To(Equal(1))

		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Dirty()).To(BeZero())
		Expect(dump(c)).To(Equal([]cache.Entry{{Key: "k", Scope: cache.ScopeCluster, Value: `{"a": "é"}`,
			SizeBytes: int64(len(`{"a": "é"}`)), CreatedAtMS: 1_000_000, UpdatedAtMS: 1_000_000,
			ExpiresAtMS: i64(1_060_000), OriginWorkerID: "w1"}}))
	})

	It("keeps created_at_ms on overwrite and moves updated_at_ms past the stored one", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "k", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		clk.Add(5 * time.Second)
		Expect(c.Set(ctx, "k", `2`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Set(ctx, "k", `3`, cache.ScopeGlobal, 0)).To(Succeed()) // same ms
		Expect(c.Flush(ctx)).To(Succeed())
		rows := dump(c)
		Expect(rows).To(HaveLen(1))
		Expect(rows[0].Value).To(Equal(`3`))
		Expect(rows[0].CreatedAtMS).To(BeEquivalentTo(1_000_000))
		Expect(rows[0].UpdatedAtMS).To(BeEquivalentTo(1_005_001))
	})

	It("falls back to the file after a restart, through the reader connection", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "k", `"v"`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Close(ctx)).To(Succeed()) // Close flushes
		c2 := openCache(dir, "w1", "", clk, cache.Options{})
		e, ok, err := c2.Get(ctx, "k")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(e.Value).To(Equal(`"v"`))
	})

	DescribeTable("refuses bad input with ErrBadEntry and keeps nothing",
		func(key, value string, scope cache.Scope, ttl time.Duration) {
			c := openCache(dir, "w1", "", clk, cache.Options{})
			err := c.Set(ctx, key, value, scope, ttl)
			Expect(err).To(MatchError(cache.ErrBadEntry))
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(c.Dirty()).To(BeZero())
		},
		Entry("an empty key", "", `1`, cache.ScopeLocal, time.Duration(0)),
		Entry("a key that is not UTF-8", "\xff", `1`, cache.ScopeLocal, time.Duration(0)),
		Entry("a value that is not JSON", "k", `{a`, cache.ScopeLocal, time.Duration(0)),
		Entry("an empty value", "k", ``, cache.ScopeLocal, time.Duration(0)),
		Entry("an unknown scope", "k", `1`, cache.Scope("fleet"), time.Duration(0)),
		Entry("a negative ttl", "k", `1`, cache.ScopeLocal, -time.Second),
	)

	It("hides an expired entry, and the cleanup deletes exactly the expired rows", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "short", `1`, cache.ScopeLocal, time.Second)).To(Succeed())
		Expect(c.Set(ctx, "long", `1`, cache.ScopeLocal, time.Hour)).To(Succeed())
		Expect(c.Set(ctx, "never", `1`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		clk.Add(time.Second)
		_, ok, _ := c.Get(ctx, "short")
		Expect(ok).To(BeFalse())
		n, err := c.Cleanup(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeEquivalentTo(1))
		var keys []string
		for _, r := range dump(c) {
			keys = append(keys, r.Key)
		}
		Expect(keys).To(Equal([]string{"long", "never"}))
	})

	It("deletes through expiry: Delete hides the key at once and the cleanup removes its row", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.Set(ctx, "k", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Delete(ctx, "k")).To(Succeed())
		_, ok, _ := c.Get(ctx, "k")
		Expect(ok).To(BeFalse())
		Expect(c.Flush(ctx)).To(Succeed())
		rows := dump(c)
		Expect(rows).To(HaveLen(1))
		Expect(*rows[0].ExpiresAtMS).To(BeNumerically("<=", rows[0].UpdatedAtMS))
		Expect(c.Cleanup(ctx)).To(BeEquivalentTo(1))
		Expect(dump(c)).To(BeEmpty())
		Expect(c.Delete(ctx, "absent")).To(Succeed())
		Expect(c.Dirty()).To(BeZero())
	})

	It("puts a failed flush back, lets newer live writes win, and says so after 5 failures in a row", func() {
		var logs bytes.Buffer
		c := openCache(dir, "w1", "", clk, cache.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		Expect(c.Set(ctx, "a", `"old"`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Set(ctx, "b", `"old"`, cache.ScopeLocal, 0)).To(Succeed())
		boom := errors.New("disk says no")
		cache.FailApply(c, func() error {
			// A live write lands while the flush runs.
			Expect(c.Set(ctx, "a", `"new"`, cache.ScopeLocal, 0)).To(Succeed())
			return boom
		})
		Expect(c.Flush(ctx)).To(MatchError(boom))
		Expect(c.Dirty()).To(Equal(2))
		cache.FailApply(c, func() error { return boom })
		for range 3 {
			Expect(c.Flush(ctx)).To(MatchError(boom))
		}
		Expect(logs.String()).NotTo(ContainSubstring("cache_flush_failing_repeatedly"))
		Expect(c.Flush(ctx)).To(MatchError(boom))
		Expect(logs.String()).To(ContainSubstring("cache_flush_failing_repeatedly"))
		Expect(dump(c)).To(BeEmpty())

		cache.FailApply(c, nil)
		Expect(c.Flush(ctx)).To(Succeed())
		rows := dump(c)
		Expect(rows).To(HaveLen(2))
		Expect(rows[0].Value).To(Equal(`"new"`))
		Expect(rows[1].Value).To(Equal(`"old"`))
	})

	It("answers its newest write while a flush runs, and never keeps in memory a row older than the file", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		value := func(key string) string {
			e, ok, err := c.Get(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			return e.Value
		}
		Expect(c.Set(ctx, "k", `"v1"`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(value("k")).To(Equal(`"v1"`)) // clean in memory
		clk.Add(time.Millisecond)
		Expect(c.Set(ctx, "k", `"v2"`, cache.ScopeGlobal, 0)).To(Succeed())
		var during string
		cache.FailApply(c, func() error { during = value("k"); return nil })
		// A peer's newer row of k is applied after the flush committed,
		// before the flush keeps its entries in memory.
		cache.AfterFlush(c, func() {
			_, err := c.Apply(ctx, []cache.Entry{entry("k", cache.ScopeGlobal, `"peer"`, 2_000_000, "w2")})
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(during).To(Equal(`"v2"`))
		Expect(value("k")).To(Equal(`"peer"`))
		Expect(dump(c)[0].Value).To(Equal(`"peer"`))
	})

	It("reads its marks at start and raises them after each committed flush", func() {
		c := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c.CardFeatures().Cache).To(BeEmpty())
		Expect(c.CardFeatures().Cache).NotTo(BeNil())
		Expect(c.Set(ctx, "g1", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Set(ctx, "l1", `1`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Marks()).To(BeEmpty())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Marks()).To(Equal(map[cache.Scope]cache.Cursor{cache.ScopeGlobal: {MS: 1_000_000, Key: "g1"}}))
		clk.Add(time.Second)
		Expect(c.Set(ctx, "c1", `1`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Close(ctx)).To(Succeed())

		c2 := openCache(dir, "w1", "", clk, cache.Options{})
		Expect(c2.Marks()).To(Equal(map[cache.Scope]cache.Cursor{
			cache.ScopeGlobal: {MS: 1_000_000, Key: "g1"}, cache.ScopeCluster: {MS: 1_001_000, Key: "c1"}}))
	})
})

var _ = Describe("The cache beside a recorder", func() {
	It("keeps its engine files apart from the recorder store of a worker named <worker>-cache", func() {
		dir := GinkgoT().TempDir()
		clk := newClock(1)
		c := openCache(dir, "x", "", clk, cache.Options{})
		Expect(cache.StorePath(config(dir, "x", ""))).To(Equal(filepath.Join(dir, ".cache", "x.records")))
		Expect(filepath.Join(dir, "x-cache.records.lock")).NotTo(BeAnExistingFile())
		Expect(c.Owner()).To(BeTrue())
	})
})

var _ = Describe("The cache's metrics", func() {
	It("are registered with the drakkar_cache_ prefix and count what happens", func() {
		reg := prometheus.NewRegistry()
		c := openCache(GinkgoT().TempDir(), "w1", "", newClock(1), cache.Options{Registerer: reg})
		Expect(c.Set(ctx, "k", `1`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Get(ctx, "k")).Error().NotTo(HaveOccurred())
		Expect(c.Get(ctx, "absent")).Error().NotTo(HaveOccurred())
		mfs, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		got := map[string]float64{}
		for _, mf := range mfs {
			Expect(mf.GetName()).To(HavePrefix("drakkar_cache_"))
			for _, m := range mf.GetMetric() {
				switch {
				case m.GetCounter() != nil:
					got[mf.GetName()] += m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					got[mf.GetName()] += m.GetGauge().GetValue()
				}
			}
		}
		Expect(got).To(HaveKeyWithValue("drakkar_cache_flushed_entries_total", 1.0))
		Expect(got).To(HaveKeyWithValue("drakkar_cache_hits_total", 1.0))
		Expect(got).To(HaveKeyWithValue("drakkar_cache_misses_total", 1.0))
		Expect(got).To(HaveKeyWithValue("drakkar_cache_dirty_entries", 0.0))
	})
})
