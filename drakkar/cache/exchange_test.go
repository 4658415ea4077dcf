// Specs of the exchange route: the parameter checks in the spec's order,
// 404 and 503, what is served, and paging by the (updated_at_ms, key)
// cursor against a reference model.

package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
)

// get asks h for the route with the raw query q.
func get(h http.Handler, q string) (int, map[string]any) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, cache.ChangesPath+"?"+q, nil))
	var body map[string]any
	Expect(json.Unmarshal(rec.Body.Bytes(), &body)).To(Succeed(), rec.Body.String())
	return rec.Code, body
}

// getPage asks h for a page and decodes it.
func getPage(h http.Handler, q string) cache.Page {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, cache.ChangesPath+"?"+q, nil))
	Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
	var p cache.Page
	Expect(json.Unmarshal(rec.Body.Bytes(), &p)).To(Succeed())
	return p
}

var _ = Describe("The exchange route", func() {
	var (
		dir string
		clk *clock
		c   *cache.Cache
		h   http.Handler
	)
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		clk = newClock(1_000_000)
		c = openCache(dir, "w1", "", clk, cache.Options{})
		h = c.ExchangeHandler()
	})

	DescribeTable("answers 400 with the first failing check's text, in the spec's order",
		func(q, text string) {
			code, body := get(h, q)
			Expect(code).To(Equal(http.StatusBadRequest))
			Expect(body).To(Equal(map[string]any{"error": text}))
		},
		Entry("scopes missing", "limit=0", cache.ErrTextScopes),
		Entry("scopes empty", "scopes=&after_ms=x", cache.ErrTextScopes),
		Entry("scopes unknown", "scopes=local", cache.ErrTextScopes),
		Entry("scopes with an empty item", "scopes=cluster,", cache.ErrTextScopes),
		Entry("scopes' last value counts", "scopes=global&scopes=nope", cache.ErrTextScopes),
		Entry("after_ms alone", "scopes=global&after_ms=x&limit=0", cache.ErrTextCursor),
		Entry("after_key alone", "scopes=global&after_key=k", cache.ErrTextCursor),
		Entry("after_ms not an integer", "scopes=global&after_ms=1.5&after_key=k&limit=0", cache.ErrTextAfterMS),
		Entry("after_ms with a plus", "scopes=global&after_ms=%2B1&after_key=k", cache.ErrTextAfterMS),
		Entry("after_ms empty", "scopes=global&after_ms=&after_key=k", cache.ErrTextAfterMS),
		Entry("after_ms beyond 64 bits", "scopes=global&after_ms=9223372036854775808&after_key=k", cache.ErrTextAfterMS),
		Entry("limit 0", "scopes=global&limit=0", cache.ErrTextLimit),
		Entry("limit 1001", "scopes=cluster,global&limit=1001", cache.ErrTextLimit),
		Entry("limit not an integer", "scopes=global&limit=ten", cache.ErrTextLimit),
		Entry("limit's last value counts", "scopes=global&limit=5&limit=-1", cache.ErrTextLimit),
	)

	It("accepts the cursor's edges: a negative after_ms, an empty after_key, limits 1 and 1000", func() {
		for _, q := range []string{"scopes=global&after_ms=-9223372036854775808&after_key=", "scopes=cluster&limit=1", "scopes=global,cluster&limit=1000"} {
			code, _ := get(h, q)
			Expect(code).To(Equal(http.StatusOK), q)
		}
	})

	It("answers 404 when the exchange is off, after the parameter checks", func() {
		cfg := config(filepath.Join(dir, "off"), "w2", "")
		cfg.Exchange = false
		off, err := cache.Open(ctx, cfg, cache.Options{NoLoops: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = off.Close(context.Background()) })
		code, body := get(off.ExchangeHandler(), "scopes=global")
		Expect(code).To(Equal(http.StatusNotFound))
		Expect(body).To(Equal(map[string]any{"error": cache.ErrTextOff}))
		code, _ = get(off.ExchangeHandler(), "scopes=")
		Expect(code).To(Equal(http.StatusBadRequest))
	})

	It("answers 404 when the cache is off and when the engine has stopped", func() {
		disabled, err := cache.Open(ctx, cache.DefaultConfig(), cache.Options{})
		Expect(err).NotTo(HaveOccurred())
		code, body := get(disabled.ExchangeHandler(), "scopes=global")
		Expect(code).To(Equal(http.StatusNotFound))
		Expect(body["error"]).To(Equal(cache.ErrTextOff))

		Expect(c.Close(ctx)).To(Succeed())
		code, _ = get(h, "scopes=global")
		Expect(code).To(Equal(http.StatusNotFound))
	})

	It("answers 503 when the read does not finish in time", func() {
		slow, err := cache.Open(ctx, config(filepath.Join(dir, "slow"), "w3", ""), cache.Options{NoLoops: true, ExchangeTimeout: 20 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = slow.Close(context.Background()) })
		cache.SlowPage(slow, func(ctx context.Context) { <-ctx.Done() })
		code, body := get(slow.ExchangeHandler(), "scopes=global")
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		Expect(body).To(Equal(map[string]any{"error": cache.ErrTextTimeout}))
	})

	It("serves only this worker's rows of the asked scopes that are not expired, with the stored value text", func() {
		Expect(c.Set(ctx, "g", `{"b":1, "a":2}`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Set(ctx, "c", `1`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(c.Set(ctx, "l", `1`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Set(ctx, "x", `1`, cache.ScopeGlobal, time.Second)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		Expect(c.Apply(ctx, []cache.Entry{entry("peer", cache.ScopeGlobal, `1`, 5, "w0")})).Error().NotTo(HaveOccurred())
		clk.Add(time.Second)

		p := getPage(h, "scopes=global")
		Expect(p.More).To(BeFalse())
		Expect(p.Rows).To(HaveLen(1))
		Expect(p.Rows[0].Key).To(Equal("g"))
		Expect(p.Rows[0].Value).To(Equal(`{"b":1, "a":2}`))
		Expect(p.Rows[0].ExpiresAtMS).To(BeNil())
		keys := func(p cache.Page) (out []string) {
			for _, r := range p.Rows {
				out = append(out, r.Key)
			}
			return out
		}
		Expect(keys(getPage(h, "scopes=cluster,global"))).To(Equal([]string{"c", "g"}))
		Expect(keys(getPage(h, "scopes=cluster"))).To(Equal([]string{"c"}))
		code, body := get(h, "scopes=global&after_ms=99999999&after_key=")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"rows": []any{}, "more": false}))
	})

	It("pages across a group of rows sharing one updated_at_ms without losing or repeating one", func() {
		var rows []cache.Entry
		for i := range 25 {
			rows = append(rows, entry(fmt.Sprintf("k%02d", i), cache.ScopeGlobal, `1`, 500, "w1"))
		}
		rows = append(rows, entry("a-late", cache.ScopeGlobal, `1`, 501, "w1"), entry("z-early", cache.ScopeCluster, `1`, 499, "w1"))
		Expect(c.Apply(ctx, rows)).Error().NotTo(HaveOccurred())
		var seen []string
		q := "scopes=cluster,global&limit=7"
		for pages := 0; ; pages++ {
			Expect(pages).To(BeNumerically("<", 10))
			p := getPage(h, q)
			Expect(len(p.Rows)).To(BeNumerically("<=", 7))
			for _, r := range p.Rows {
				seen = append(seen, r.Key)
			}
			if !p.More {
				break
			}
			last := p.Rows[len(p.Rows)-1]
			q = fmt.Sprintf("scopes=cluster,global&limit=7&after_ms=%d&after_key=%s", last.UpdatedAtMS, last.Key)
		}
		want := []string{"z-early"}
		for i := range 25 {
			want = append(want, fmt.Sprintf("k%02d", i))
		}
		Expect(seen).To(Equal(append(want, "a-late")))
	})

	It("never commits a worker's row behind a cursor a peer may hold, even in the same millisecond", func() {
		Expect(c.Set(ctx, "g-b", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		p := getPage(h, "scopes=global")
		Expect(p.Rows).To(HaveLen(1))
		cursor := fmt.Sprintf("scopes=global&after_ms=%d&after_key=%s", p.Rows[0].UpdatedAtMS, p.Rows[0].Key)
		Expect(c.Set(ctx, "g-a", `1`, cache.ScopeGlobal, 0)).To(Succeed()) // same ms, smaller key
		Expect(c.Flush(ctx)).To(Succeed())
		p = getPage(h, cursor)
		Expect(p.Rows).To(HaveLen(1))
		Expect(p.Rows[0].Key).To(Equal("g-a"))
		Expect(p.Rows[0].UpdatedAtMS).To(BeEquivalentTo(1_000_001))
	})

	It("reads a two-scope page from one snapshot, so a flush committed meanwhile is not half served", func() {
		Expect(c.Set(ctx, "c-old", `1`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		clk.Add(5 * time.Millisecond)
		// Between the cluster and the global search of the first page, a
		// flush commits a row of each scope in one millisecond; the
		// cluster key sorts first.
		flushed := false
		cache.BetweenScopes(c, func() {
			if flushed {
				return
			}
			flushed = true
			// What a flush commits (Set would wait here for the reader
			// connection the page holds).
			now := clk.Now().UnixMilli()
			_, err := c.Apply(ctx, []cache.Entry{
				entry("c-new", cache.ScopeCluster, `2`, now, "w1"),
				entry("g-new", cache.ScopeGlobal, `2`, now, "w1")})
			Expect(err).NotTo(HaveOccurred())
		})
		// A puller's walk: pages until more is false, each from the last
		// row's cursor.
		var seen []string
		q := "scopes=cluster,global&limit=1000"
		for range 10 {
			p := getPage(h, q)
			for _, r := range p.Rows {
				seen = append(seen, r.Key)
			}
			if len(p.Rows) == 0 {
				break
			}
			last := p.Rows[len(p.Rows)-1]
			q = fmt.Sprintf("scopes=cluster,global&limit=1000&after_ms=%d&after_key=%s", last.UpdatedAtMS, last.Key)
		}
		Expect(flushed).To(BeTrue())
		Expect(seen).To(Equal([]string{"c-old", "c-new", "g-new"}))
	})

	It("matches a reference model of the cursor on random caches, cursors and limits", func() {
		rng := rand.New(rand.NewPCG(7, 11))
		type row struct {
			ms     int64
			key    string
			scope  cache.Scope
			origin string
			exp    *int64
		}
		var model []row
		var batch []cache.Entry
		for i := range 300 {
			r := row{ms: int64(rng.IntN(20)) - 5, key: fmt.Sprintf("k%03d", i),
				scope:  []cache.Scope{cache.ScopeLocal, cache.ScopeCluster, cache.ScopeGlobal}[rng.IntN(3)],
				origin: []string{"w1", "w1", "w2"}[rng.IntN(3)]}
			if rng.IntN(5) == 0 {
				r.exp = i64(1_000_000 + int64(rng.IntN(3)) - 1)
			}
			model = append(model, r)
			e := entry(r.key, r.scope, `1`, r.ms, r.origin)
			e.ExpiresAtMS = r.exp
			batch = append(batch, e)
		}
		Expect(c.Apply(ctx, batch)).Error().NotTo(HaveOccurred())
		sort.Slice(model, func(i, j int) bool {
			return model[i].ms < model[j].ms || (model[i].ms == model[j].ms && model[i].key < model[j].key)
		})
		for range 200 {
			scopes := [][]cache.Scope{{cache.ScopeCluster}, {cache.ScopeGlobal}, {cache.ScopeCluster, cache.ScopeGlobal}}[rng.IntN(3)]
			limit := 1 + rng.IntN(40)
			afterMS, afterKey := int64(rng.IntN(24))-7, fmt.Sprintf("k%03d", rng.IntN(310))
			var want []string
			for _, r := range model {
				in := false
				for _, s := range scopes {
					in = in || s == r.scope
				}
				after := r.ms > afterMS || (r.ms == afterMS && r.key > afterKey)
				if in && after && r.origin == "w1" && (r.exp == nil || *r.exp > 1_000_000) {
					want = append(want, r.key)
				}
			}
			q := "scopes=" + string(scopes[0])
			if len(scopes) == 2 {
				q += "," + string(scopes[1])
			}
			p := getPage(h, fmt.Sprintf("%s&limit=%d&after_ms=%d&after_key=%s", q, limit, afterMS, afterKey))
			var got []string
			for _, r := range p.Rows {
				got = append(got, r.Key)
			}
			n := min(limit, len(want))
			Expect(got).To(Equal(want[:n:n]), q)
			Expect(p.More).To(Equal(len(want) > limit))
		}
	})
})
