// Contract specs of the read routes: trace, trace-by-label, label-keys,
// events, workers and the cache browser.

package debugapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
)

// field returns one field of every event row of an array answer.
func field(body any, key string) []any {
	var out []any
	for _, e := range body.([]any) {
		out = append(out, e.(map[string]any)[key])
	}
	return out
}

var _ = Describe("GET /api/v1/debug/trace", func() {
	var storage, shared string
	var rec *recorder.Recorder
	var h http.Handler

	BeforeEach(func() {
		storage, shared = tempDirs()
		sealFile(storage, shared, "w2", started("old", 3, 42, nil), started("other", 3, 43, nil))
		sealFile(storage, shared, "w3",
			started("batch", 9, 1, nil, [2]int64{3, 42}, [2]int64{3, 44}),
			recorder.Annotation(time.Now(), "batch", map[string]any{"offsets": []any{map[string]any{"partition": 3, "offset": 42}}}),
			recorder.Annotation(time.Now(), "x", map[string]any{"offsets": []any{map[string]any{"partition": 3, "offset": 41}}}))
		rec = openRecorder(storage, shared, "w1")
		rec.Record(started("live", 3, 42, map[string]string{"tenant": "acme", "zone": "eu"}))
		rec.Record(started("live2", 4, 1, map[string]string{"tenant": "zeta"}))
		Expect(rec.Flush(ctx)).To(Succeed())
		h = newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
	})

	It("searches the own files by default, every row with worker_name", func() {
		a := get(h, "/api/v1/debug/trace?partition=3&offset=42")
		Expect(a.Status).To(Equal(200))
		Expect(field(a.JSON(), "task_id")).To(Equal([]any{"live"}))
		Expect(field(a.JSON(), "worker_name")).To(Equal([]any{"w1"}))
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("1"))
		Expect(a.Header.Get("X-Drakkar-Trace-Truncated")).To(Equal("false"))
	})

	It("with history=1 searches the own cluster's sealed files: the event, the tasks listing it and the annotations", func() {
		a := get(h, "/api/v1/debug/trace?partition=3&offset=42&history=1")
		Expect(a.Status).To(Equal(200))
		Expect(field(a.JSON(), "task_id")).To(ConsistOf("old", "batch", "batch"))
		Expect(field(a.JSON(), "event")).To(ConsistOf("task_started", "task_started", "annotation"))
		Expect(field(a.JSON(), "worker_name")).To(ConsistOf("w2", "w3", "w3"))
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("2"))
		Expect(a.Header.Get("X-Drakkar-Trace-Truncated")).To(Equal("false"))
		row := a.JSON().([]any)[0].(map[string]any)
		for _, c := range recorder.EventColumns {
			Expect(row).To(HaveKey(c))
		}
		Expect(row).To(HaveLen(len(recorder.EventColumns) + 1))
	})

	It("stops after ui.trace.history_max_files files", func() {
		c := apiConfig(storage, shared, "w1")
		c.TraceHistoryMaxFiles = 1
		a := get(newAPI(debugapi.Options{Config: c, Recorder: rec}), "/api/v1/debug/trace?partition=3&offset=42&history=1")
		Expect(a.Status).To(Equal(200))
		Expect(a.JSON()).To(HaveLen(len(field(a.JSON(), "id"))), "the body stays an array of rows")
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("1"))
		Expect(a.Header.Get("X-Drakkar-Trace-Truncated")).To(Equal("true"))
	})

	It("stops after ui.trace.history_max_seconds on the injected clock", func() {
		c := apiConfig(storage, shared, "w1")
		c.TraceHistoryMaxSeconds = time.Second
		now := time.Unix(1000, 0)
		tick := func() time.Time { now = now.Add(600 * time.Millisecond); return now }
		a := get(newAPI(debugapi.Options{Config: c, Recorder: rec, Now: tick}), "/api/v1/debug/trace?partition=3&offset=42&history=1")
		Expect(a.Status).To(Equal(200))
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("1"))
		Expect(a.Header.Get("X-Drakkar-Trace-Truncated")).To(Equal("true"))
	})

	DescribeTable("answers 422 to a bad query",
		func(q, want string) {
			a := get(h, "/api/v1/debug/trace"+q)
			Expect(a.Status).To(Equal(422))
			Expect(string(a.Body)).To(Equal(want))
		},
		Entry("no partition", "?offset=1", `{"detail":[{"loc":["query","partition"],"msg":"Field required"}]}`),
		Entry("no offset", "?partition=1", `{"detail":[{"loc":["query","offset"],"msg":"Field required"}]}`),
		Entry("offset not an integer", "?partition=1&offset=x", `{"detail":[{"loc":["query","offset"],"msg":"Input should be a valid integer"}]}`),
		Entry("history not a boolean", "?partition=1&offset=1&history=maybe", `{"detail":[{"loc":["query","history"],"msg":"Input should be a valid boolean"}]}`),
		Entry("partition above int32", "?partition=2147483648&offset=1", `{"detail":[{"loc":["query","partition"],"msg":"Input should be between -2147483648 and 2147483647"}]}`),
		Entry("partition below int32", "?partition=-2147483649&offset=1", `{"detail":[{"loc":["query","partition"],"msg":"Input should be between -2147483648 and 2147483647"}]}`),
	)

	It("takes the contract's boolean spellings for history", func() {
		for _, v := range []string{"yes", "on", "t", "TRUE"} {
			a := get(h, "/api/v1/debug/trace?partition=3&offset=42&history="+v)
			Expect(a.Status).To(Equal(200), v)
			Expect(field(a.JSON(), "task_id")).To(ConsistOf("old", "batch", "batch"), v)
		}
		a := get(h, "/api/v1/debug/trace?partition=3&offset=42&history=off")
		Expect(field(a.JSON(), "task_id")).To(Equal([]any{"live"}))
	})

	It("traces by label on the live file and lists the label keys sorted", func() {
		a := get(h, "/api/v1/debug/trace-by-label?key=tenant&value=acme")
		Expect(a.Status).To(Equal(200))
		Expect(field(a.JSON(), "task_id")).To(Equal([]any{"live"}))
		Expect(field(a.JSON(), "worker_name")).To(Equal([]any{"w1"}))
		a = get(h, "/api/v1/debug/trace-by-label?key=tenant")
		Expect(a.Status).To(Equal(422))
		Expect(string(a.Body)).To(Equal(`{"detail":[{"loc":["query","value"],"msg":"Field required"}]}`))
		a = get(h, "/api/v1/debug/label-keys")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`["tenant","zone"]`))
	})

	DescribeTable("answers 422 to an empty label key or value",
		func(q, want string) {
			a := get(h, "/api/v1/debug/trace-by-label"+q)
			Expect(a.Status).To(Equal(422))
			Expect(string(a.Body)).To(Equal(want))
		},
		Entry("empty key", "?key=&value=acme", `{"detail":[{"loc":["query","key"],"msg":"String should have at least 1 character"}]}`),
		Entry("empty value", "?key=tenant&value=", `{"detail":[{"loc":["query","value"],"msg":"String should have at least 1 character"}]}`),
	)

	It("answers nothing found in memory-only mode", func() {
		m := newAPI(debugapi.Options{Config: apiConfig("", "", "w1")})
		a := get(m, "/api/v1/debug/trace?partition=3&offset=42")
		Expect(string(a.Body)).To(Equal(`[]`))
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("0"))
		Expect(string(get(m, "/api/v1/debug/trace-by-label?key=a&value=b").Body)).To(Equal(`[]`))
		Expect(string(get(m, "/api/v1/debug/label-keys").Body)).To(Equal(`[]`))
		Expect(string(get(m, "/api/v1/events").Body)).To(Equal(`[]`))
	})
})

var _ = Describe("GET /api/v1/events", func() {
	var h http.Handler

	BeforeEach(func() {
		storage, shared := tempDirs()
		rec := openRecorder(storage, shared, "w1")
		for i := 0; i < 5; i++ {
			rec.Record(started("t", int64(i%2), int64(i), nil))
		}
		rec.Record(recorder.Annotation(time.Now(), "t", map[string]any{"k": 1}))
		Expect(rec.Flush(ctx)).To(Succeed())
		h = newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
	})

	ids := func(a answer) []any {
		var out []any
		for _, e := range a.JSON().([]any) {
			out = append(out, e.(map[string]any)["id"])
		}
		return out
	}

	DescribeTable("answers the pinned rows, id descending, filtered",
		func(q string, want []any) {
			a := get(h, "/api/v1/events"+q)
			Expect(a.Status).To(Equal(200))
			Expect(ids(a)).To(Equal(want))
		},
		Entry("all", "", []any{6.0, 5.0, 4.0, 3.0, 2.0, 1.0}),
		Entry("limit", "?limit=2", []any{6.0, 5.0}),
		Entry("limit 0", "?limit=0", []any(nil)),
		Entry("after_id", "?after_id=4", []any{6.0, 5.0}),
		Entry("partitions", "?partitions=1", []any{4.0, 2.0}),
		Entry("partitions list", "?partitions=0,1&event_types=task_started&limit=3", []any{5.0, 4.0, 3.0}),
		Entry("event_types", "?event_types=annotation", []any{6.0}),
		Entry("origin", "?origin=kafka&event_types=task_started", []any{5.0, 4.0, 3.0, 2.0, 1.0}),
	)

	DescribeTable("answers 422 to a bad parameter",
		func(q, want string) {
			a := get(h, "/api/v1/events"+q)
			Expect(a.Status).To(Equal(422))
			Expect(string(a.Body)).To(Equal(want))
		},
		Entry("limit negative", "?limit=-1", `{"detail":[{"loc":["query","limit"],"msg":"Input should be between 0 and 10000"}]}`),
		Entry("limit too big", "?limit=10001", `{"detail":[{"loc":["query","limit"],"msg":"Input should be between 0 and 10000"}]}`),
		Entry("limit text", "?limit=ten", `{"detail":[{"loc":["query","limit"],"msg":"Input should be a valid integer"}]}`),
		Entry("after_id text", "?after_id=x", `{"detail":[{"loc":["query","after_id"],"msg":"Input should be a valid integer"}]}`),
		Entry("partitions text", "?partitions=1,a", `{"detail":[{"loc":["query","partitions"],"msg":"Invalid comma-separated list of integers"}]}`),
		Entry("partitions empty item", "?partitions=1,,2", `{"detail":[{"loc":["query","partitions"],"msg":"Invalid comma-separated list"}]}`),
		Entry("event_types empty item", "?event_types=,", `{"detail":[{"loc":["query","event_types"],"msg":"Invalid comma-separated list"}]}`),
	)
})

var _ = Describe("GET /api/v1/workers", func() {
	It("lists the registry's workers: own cluster first, then by name, with liveness", func() {
		_, shared := tempDirs()
		dir := filepath.Join(shared, "fleet", "workers")
		open := func(worker, cl string) *registry.Registry {
			r, err := registry.Open(ctx, registry.Options{Dir: dir, Worker: worker, Cluster: cl, URL: "http://" + worker, NoLoops: true})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = r.Close(context.Background()) })
			Expect(r.Publish(ctx)).To(Succeed())
			return r
		}
		me := open("w2", cluster)
		open("a0", "other")
		open("w1", cluster)
		gone := open("w9", cluster)
		Expect(gone.Close(ctx)).To(Succeed())
		Expect(me.Refresh(ctx)).To(Succeed())
		c := apiConfig("", shared, "w2")
		c.URL = "http://w2"
		a := get(newAPI(debugapi.Options{Config: c, Registry: me}), "/api/v1/workers")
		Expect(a.Status).To(Equal(200))
		var got []string
		for _, it := range a.JSON().([]any) {
			m := it.(map[string]any)
			Expect(m).To(HaveKey("last_seen_ts"))
			got = append(got, m["worker_name"].(string)+"|"+m["cluster_name"].(string)+"|"+m["url"].(string)+"|"+
				map[bool]string{true: "current", false: "-"}[m["is_current"].(bool)]+"|"+map[bool]string{true: "online", false: "offline"}[m["online"].(bool)])
		}
		Expect(got).To(Equal([]string{
			"w1|search hot|http://w1|-|online", "w2|search hot|http://w2|current|online",
			"w9|search hot|http://w9|-|offline", "a0|other|http://a0|-|online",
		}))
	})

	It("lists this worker as current even when a planted card carries its instance id", func() {
		_, shared := tempDirs()
		dir := filepath.Join(shared, "fleet", "workers")
		me, err := registry.Open(ctx, registry.Options{Dir: dir, Worker: "w2", Cluster: cluster, URL: "http://w2", NoLoops: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = me.Close(context.Background()) })
		planted := registry.Card{Version: registry.CardVersion, Worker: "evil", Instance: me.Instance(), Cluster: cluster,
			URL: "http://evil", StartedAt: time.Now(), PublishedAt: time.Now(), State: registry.StateRunning}
		raw, err := planted.Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "evil.json"), raw, 0o600)).To(Succeed())
		Expect(me.Refresh(ctx)).To(Succeed())
		c := apiConfig("", shared, "w2")
		c.URL = "http://w2"
		a := get(newAPI(debugapi.Options{Config: c, Registry: me}), "/api/v1/workers")
		Expect(a.Status).To(Equal(200))
		var current []string
		for _, it := range a.JSON().([]any) {
			m := it.(map[string]any)
			if m["is_current"].(bool) {
				current = append(current, m["worker_name"].(string)+"|"+m["url"].(string))
			}
		}
		Expect(current).To(Equal([]string{"w2|http://w2"}))
	})

	It("lists the worker alone without a registry", func() {
		c := apiConfig("", "", "w1")
		c.URL = "http://127.0.0.1:8080"
		a := get(newAPI(debugapi.Options{Config: c, Now: func() time.Time { return time.Unix(1700000000, 0) }}), "/api/v1/workers")
		Expect(string(a.Body)).To(Equal(`[{"worker_name":"w1","cluster_name":"search hot","url":"http://127.0.0.1:8080","is_current":true,"last_seen_ts":1700000000,"online":true}]`))
	})
})

var _ = Describe("the cache browser", func() {
	It("answers 404 Cache is disabled without a cache", func() {
		h := newAPI(debugapi.Options{})
		for _, p := range []string{"/api/v1/debug/cache/entries", "/api/v1/debug/cache/entry/k", "/api/v1/debug/cache/stats"} {
			a := get(h, p)
			Expect(a.Status).To(Equal(404))
			Expect(string(a.Body)).To(Equal(`{"detail":"Cache is disabled"}`))
		}
	})

	var h http.Handler
	var c *cache.Cache
	now := time.UnixMilli(1_700_000_000_000)

	BeforeEach(func() {
		storage, _ := tempDirs()
		cfg := cache.DefaultConfig()
		cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = true, storage, "w1", cluster
		var err error
		c, err = cache.Open(ctx, cfg, cache.Options{NoLoops: true, Now: func() time.Time { return now }})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = c.Close(context.Background()) })
		Expect(c.Set(ctx, "b", `{"v":2}`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(c.Set(ctx, "a/x", `1`, cache.ScopeLocal, 0)).To(Succeed())
		Expect(c.Set(ctx, "c:1", `"text"`, cache.ScopeGlobal, time.Second)).To(Succeed())
		Expect(c.Flush(ctx)).To(Succeed())
		later := now.Add(time.Minute)
		h = newAPI(debugapi.Options{Config: apiConfig(storage, "", "w1"), Cache: c, Now: func() time.Time { return later }})
	})

	It("pages the entries by key with their total, limit and offset", func() {
		a := get(h, "/api/v1/debug/cache/entries")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`{"entries":[` +
			`{"key":"a/x","scope":"local","value":"1","size_bytes":1,"created_at_ms":1700000000000,"updated_at_ms":1700000000000,"expires_at_ms":null,"origin_worker_id":"w1"},` +
			`{"key":"b","scope":"cluster","value":"{\"v\":2}","size_bytes":7,"created_at_ms":1700000000000,"updated_at_ms":1700000000000,"expires_at_ms":null,"origin_worker_id":"w1"},` +
			`{"key":"c:1","scope":"global","value":"\"text\"","size_bytes":6,"created_at_ms":1700000000000,"updated_at_ms":1700000000000,"expires_at_ms":1700000001000,"origin_worker_id":"w1"}],` +
			`"total":3,"limit":200,"offset":0}`))
	})

	keys := func(a answer) []any {
		var out []any
		for _, e := range a.JSON().(map[string]any)["entries"].([]any) {
			out = append(out, e.(map[string]any)["key"])
		}
		return out
	}

	DescribeTable("applies limit, offset, scope, search and expired_only",
		func(q string, want []any, total int) {
			a := get(h, "/api/v1/debug/cache/entries"+q)
			Expect(a.Status).To(Equal(200), string(a.Body))
			Expect(keys(a)).To(Equal(want))
			Expect(a.JSON().(map[string]any)["total"]).To(BeNumerically("==", total))
		},
		Entry("limit 0: no entries, the total", "?limit=0", []any(nil), 3),
		Entry("limit", "?limit=2", []any{"a/x", "b"}, 3),
		Entry("offset", "?limit=1&offset=1", []any{"b"}, 3),
		Entry("offset past the end", "?offset=5", []any(nil), 3),
		Entry("scope", "?scope=cluster", []any{"b"}, 1),
		Entry("search in the key", "?search=/", []any{"a/x"}, 1),
		Entry("expired_only true", "?expired_only=true", []any{"c:1"}, 1),
		Entry("expired_only 1", "?expired_only=1", []any{"c:1"}, 1),
		Entry("expired_only no", "?expired_only=no", []any{"a/x", "b", "c:1"}, 3),
		Entry("limit 1000", "?limit=1000", []any{"a/x", "b", "c:1"}, 3),
	)

	DescribeTable("answers 422 to a bad paging or filter parameter",
		func(q, want string) {
			a := get(h, "/api/v1/debug/cache/entries"+q)
			Expect(a.Status).To(Equal(422))
			Expect(string(a.Body)).To(Equal(want))
		},
		Entry("limit above 1000", "?limit=1001", `{"detail":[{"loc":["query","limit"],"msg":"Input should be between 0 and 1000"}]}`),
		Entry("limit negative", "?limit=-1", `{"detail":[{"loc":["query","limit"],"msg":"Input should be between 0 and 1000"}]}`),
		Entry("limit not an integer", "?limit=1.5", `{"detail":[{"loc":["query","limit"],"msg":"Input should be a valid integer"}]}`),
		Entry("offset negative", "?offset=-1", `{"detail":[{"loc":["query","offset"],"msg":"Input should be greater than or equal to 0"}]}`),
		Entry("expired_only maybe", "?expired_only=maybe", `{"detail":[{"loc":["query","expired_only"],"msg":"Input should be a valid boolean"}]}`),
	)

	It("shows one entry with its value decoded and its raw text", func() {
		a := get(h, "/api/v1/debug/cache/entry/b")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`{"key":"b","scope":"cluster","value":{"v":2},"raw_value":"{\"v\":2}","size_bytes":7,` +
			`"created_at_ms":1700000000000,"updated_at_ms":1700000000000,"expires_at_ms":null,"origin_worker_id":"w1"}`))
		a = get(h, "/api/v1/debug/cache/entry/a/x")
		Expect(a.Status).To(Equal(200))
		Expect(a.JSON()).To(And(HaveKeyWithValue("value", 1.0), HaveKeyWithValue("raw_value", "1")))
		a = get(h, "/api/v1/debug/cache/entry/none")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"detail":"Cache entry not found"}`))
	})

	It("reaches every key, those that are not clean paths too, percent-encoded", func() {
		keys := map[string]string{
			".": "%2E", "..": "%2E%2E", `a\b`: "a%5Cb", "a//b": "a%2F%2Fb", "a/../b": "a/%2E%2E/b",
			"/lead": "%2Flead", "trail/": "trail%2F", "100%": "100%25", "q?x#y": "q%3Fx%23y",
		}
		for k := range keys {
			Expect(c.Set(ctx, k, `"`+strings.ReplaceAll(k, `\`, `\\`)+`"`, cache.ScopeLocal, 0)).To(Succeed())
		}
		for k, enc := range keys {
			a := get(h, "/api/v1/debug/cache/entry/"+enc)
			Expect(a.Status).To(Equal(200), "%s: %s", k, a.Body)
			Expect(a.JSON()).To(HaveKeyWithValue("key", k))
		}
		// Plain keys and their slashes need no encoding.
		a := get(h, "/api/v1/debug/cache/entry/a/x")
		Expect(a.Status).To(Equal(200))
		// A path that is not clean as written is still refused, never redirected.
		a = get(h, "/api/v1/debug/cache/entry/a/../b")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"detail":"Not Found"}`))
	})

	It("counts the memory layer (the flushed entries it keeps and a dirty one) and the file, and mounts the exchange", func() {
		Expect(c.Set(ctx, "d", `"dirty"`, cache.ScopeLocal, 0)).To(Succeed())
		a := get(h, "/api/v1/debug/cache/stats")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`{"entries_in_memory":4,"bytes_in_memory":21,"entries_in_db":3,"bytes_in_db":14,` +
			`"by_scope":{"cluster":1,"global":1,"local":1},"dirty":1,"worker":"w1","cluster":"search hot"}`))
		a = get(h, "/api/v1/peer/cache/changes?scopes=cluster")
		Expect(a.Status).To(Equal(200), string(a.Body))
		Expect(a.JSON().(map[string]any)["rows"]).To(HaveLen(1))
	})
})
