// Specs of the pull and of the one LWW rule: peers' rows converge, hostile
// peers are refused and counted without harming the others, and the same
// updates applied in any order leave the same survivor.

package cache_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/registry"
)

// peerList is a fixed PeerLister.
type peerList []registry.Peer

func (p peerList) Peers() []registry.Peer { return p }

// serve serves c's exchange route until the spec ends and returns its URL.
func serve(c *cache.Cache) string {
	mux := http.NewServeMux()
	mux.Handle(cache.ChangesPath, c.ExchangeHandler())
	srv := httptest.NewServer(mux)
	DeferCleanup(srv.Close)
	return srv.URL
}

// peerOf is the registry's view of c served at url.
func peerOf(c *cache.Cache, url string) registry.Peer {
	return registry.Peer{Worker: c.Worker(), Cluster: c.Cluster(), URL: url, Online: true, State: registry.StateRunning,
		Features: c.CardFeatures()}
}

var _ = Describe("The pull", func() {
	var (
		dir string
		clk *clock
	)
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		clk = newClock(1_000_000)
	})

	It("pulls cluster and global rows from a peer of its cluster, global only from another, never local", func() {
		w2 := openCache(filepath.Join(dir, "2"), "w2", "blue", clk, cache.Options{})
		w3 := openCache(filepath.Join(dir, "3"), "w3", "red", clk, cache.Options{})
		for _, c := range []*cache.Cache{w2, w3} {
			for _, s := range []cache.Scope{cache.ScopeLocal, cache.ScopeCluster, cache.ScopeGlobal} {
				Expect(c.Set(ctx, c.Worker()+"-"+string(s), `1`, s, 0)).To(Succeed())
			}
			Expect(c.Flush(ctx)).To(Succeed())
		}
		peers := peerList{peerOf(w2, serve(w2)), peerOf(w3, serve(w3))}
		w1 := openCache(filepath.Join(dir, "1"), "w1", "blue", clk, cache.Options{Peers: peers})
		res := w1.Pull(ctx)
		Expect(res).To(HaveLen(2))
		for _, r := range res {
			Expect(r.Err).NotTo(HaveOccurred())
			Expect(r.Asked).To(BeTrue())
		}
		var keys []string
		for _, r := range dump(w1) {
			keys = append(keys, r.Key)
		}
		Expect(keys).To(Equal([]string{"w2-cluster", "w2-global", "w3-global"}))

		// Nothing new: no peer is asked again.
		for _, r := range w1.Pull(ctx) {
			Expect(r.Asked).To(BeFalse())
		}
	})

	It("asks a peer only when its card's mark is past the cursor, and only offline-free peers", func() {
		w2 := openCache(filepath.Join(dir, "2"), "w2", "", clk, cache.Options{})
		url := serve(w2)
		p := peerOf(w2, url)
		w1 := openCache(filepath.Join(dir, "1"), "w1", "", clk, cache.Options{Peers: peerList{p}})
		Expect(w1.Pull(ctx)[0].Asked).To(BeFalse()) // {"cache": {}}: nothing to pull yet
		Expect(w2.Set(ctx, "k", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(w2.Flush(ctx)).To(Succeed())
		offline := peerOf(w2, url)
		offline.Online = false
		w1b := openCache(filepath.Join(dir, "1b"), "w1b", "", clk, cache.Options{Peers: peerList{offline}})
		Expect(w1b.Pull(ctx)[0].Asked).To(BeFalse())
	})

	It("pulls a peer again from the start after another process spooled into it rows behind the cursor", func() {
		w2dir := filepath.Join(dir, "2")
		w2 := openCache(w2dir, "w2", "", clk, cache.Options{})
		url := serve(w2)
		Expect(w2.Set(ctx, "g-b", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(w2.Flush(ctx)).To(Succeed())
		w1 := openCache(filepath.Join(dir, "1"), "w1", "", clk, cache.Options{})
		pull := func() {
			for _, r := range w1.Pull(ctx) {
				Expect(r.Err).NotTo(HaveOccurred())
			}
		}
		cache.SetPeers(w1, peerList{peerOf(w2, url)})
		pull()
		clk.Add(10 * time.Second)
		Expect(w2.Set(ctx, "g-c", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(w2.Flush(ctx)).To(Succeed())
		cache.SetPeers(w1, peerList{peerOf(w2, url)})
		pull() // the cursor stands at g-c

		// A second process of worker w2 (not the owner: its write goes
		// through the spool) writes a row stamped by its own, slower
		// clock, behind w1's cursor.
		kid := startChild(childSpec{Mode: "set", Storage: w2dir, Worker: "w2", Key: "g-a", Value: `2`, AtMS: 1_000_000 - 5})
		Expect(kid.await("owner ")).To(Equal("owner false"))
		Expect(kid.cmd.Wait()).To(Succeed())
		p := peerOf(w2, url)
		Expect(p.Features.CacheResync).To(BeEquivalentTo(1))
		cache.SetPeers(w1, peerList{p})
		pull()
		Expect(shared(dump(w1))).To(Equal(shared(dump(w2))))
		Expect(dump(w1)).To(ContainElement(HaveField("Key", "g-a")))
	})

	It("refuses hostile pages, counts them, applies nothing of them, and still pulls the good peer", func() {
		good := openCache(filepath.Join(dir, "good"), "good", "", clk, cache.Options{})
		Expect(good.Set(ctx, "g", `1`, cache.ScopeGlobal, 0)).To(Succeed())
		Expect(good.Flush(ctx)).To(Succeed())
		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		hostile := map[string]http.HandlerFunc{
			"garbage": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"rows": [`)) },
			"huge": func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"rows": [], "more": false, "pad": "` + strings.Repeat("x", 4096) + `"}`))
			},
			"slow": func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"rows": [`))
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			},
			"liar": func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"rows": [{"key": "x", "scope": "global", "value": "1", "size_bytes": 1, "created_at_ms": 1, "updated_at_ms": 1, "expires_at_ms": null, "origin_worker_id": "good"}], "more": false}`))
			},
			"local": func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"rows": [{"key": "y", "scope": "local", "value": "1", "size_bytes": 1, "created_at_ms": 1, "updated_at_ms": 1, "expires_at_ms": null, "origin_worker_id": "local"}], "more": false}`))
			},
			"badvalue": func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"rows": [{"key": "z", "scope": "global", "value": "{nope", "size_bytes": 5, "created_at_ms": 1, "updated_at_ms": 1, "expires_at_ms": null, "origin_worker_id": "badvalue"}], "more": false}`))
			},
			"error": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) },
		}
		peers := peerList{peerOf(good, serve(good))}
		for name, h := range hostile {
			srv := httptest.NewServer(h)
			DeferCleanup(srv.Close)
			peers = append(peers, registry.Peer{Worker: name, URL: srv.URL, Online: true,
				Features: registry.Features{Cache: map[string]registry.Mark{"global": {MS: 9, Key: "x"}}}})
		}
		reg := prometheus.NewRegistry()
		w1 := openCache(filepath.Join(dir, "1"), "w1", "", clk, cache.Options{Peers: peers, Registerer: reg,
			MaxPageBytes: 1024, HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
		res := w1.Pull(ctx)
		failed := map[string]bool{}
		for _, r := range res {
			failed[r.Worker] = r.Err != nil
		}
		Expect(failed).To(Equal(map[string]bool{"good": false, "garbage": true, "huge": true, "slow": true,
			"liar": true, "local": true, "badvalue": true, "error": true}))
		Expect(shared(dump(w1))).To(HaveLen(1))
		Expect(dump(w1)[0].Key).To(Equal("g"))
		Expect(peerFailures(reg)).To(Equal(map[string]float64{"request": 1, "status": 1, "page": 5, "apply": 0}))
	})

	It("applies the same updates in any order and chunking to the same survivors (LWW property)", func() {
		rng := rand.New(rand.NewPCG(3, 5))
		for round := range 20 {
			var updates []cache.Entry
			used := map[string]bool{}
			for len(updates) < 40 {
				key := fmt.Sprintf("k%d", rng.IntN(4))
				ms := int64(rng.IntN(6))
				origin := fmt.Sprintf("w%d", rng.IntN(3))
				id := fmt.Sprint(key, ms, origin)
				if used[id] { // one worker writes one version of a key once
					continue
				}
				used[id] = true
				updates = append(updates, entry(key, cache.ScopeGlobal, fmt.Sprintf(`"%s@%d"`, origin, ms), ms, origin))
			}
			var dumps [][]cache.Entry
			for side := range 2 {
				c := openCache(filepath.Join(dir, fmt.Sprint(round, side)), "x", "", clk, cache.Options{})
				order := rng.Perm(len(updates))
				for i := 0; i < len(order); {
					n := 1 + rng.IntN(5)
					var chunk []cache.Entry
					seen := map[string]bool{}
					for ; i < len(order) && len(chunk) < n && !seen[updates[order[i]].Key]; i++ {
						seen[updates[order[i]].Key] = true
						chunk = append(chunk, updates[order[i]])
					}
					Expect(c.Apply(ctx, chunk)).Error().NotTo(HaveOccurred())
				}
				dumps = append(dumps, dump(c))
			}
			Expect(dumps[0]).To(Equal(dumps[1]))
			// The survivor of each key: the greatest updated_at_ms, then the smallest origin.
			for _, row := range dumps[0] {
				for _, u := range updates {
					if u.Key == row.Key {
						Expect(u.UpdatedAtMS < row.UpdatedAtMS || (u.UpdatedAtMS == row.UpdatedAtMS && u.OriginWorkerID >= row.OriginWorkerID)).To(BeTrue())
					}
				}
			}
		}
	})
})

// peerFailures reads drakkar_cache_peer_sync_failures_total by reason.
func peerFailures(reg *prometheus.Registry) map[string]float64 {
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "drakkar_cache_peer_sync_failures_total" {
			for _, m := range mf.GetMetric() {
				out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

var _ = context.Background
