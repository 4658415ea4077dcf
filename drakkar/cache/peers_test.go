package cache_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
)

var _ = Describe("Peers", func() {
	It("shows each peer's cursor, last pull and latest failure, kept after a later pull succeeds", func() {
		dir := GinkgoT().TempDir()
		clk := newClock(1_000_000)
		w2 := openCache(filepath.Join(dir, "2"), "w2", "blue", clk, cache.Options{})
		Expect(w2.Set(ctx, "k1", `1`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(w2.Flush(ctx)).To(Succeed())
		var down atomic.Bool
		down.Store(true)
		real := w2.ExchangeHandler()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			real.ServeHTTP(w, r)
		}))
		DeferCleanup(srv.Close)
		peer := peerOf(w2, srv.URL)
		w1 := openCache(filepath.Join(dir, "1"), "w1", "blue", clk, cache.Options{Peers: peerList{peer}})
		Expect(w1.Peers()).To(BeEmpty(), "no pull yet")

		w1.Pull(ctx)
		ps := w1.Peers()
		Expect(ps).To(HaveLen(1))
		Expect(ps[0].Worker).To(Equal("w2"))
		Expect(ps[0].URL).To(Equal(srv.URL))
		Expect(ps[0].Asked).To(BeTrue())
		Expect(ps[0].OK).To(BeFalse())
		Expect(ps[0].Cursor).To(BeNil())
		Expect(ps[0].LastError).To(ContainSubstring("503"))
		Expect(ps[0].LastErrorAt).NotTo(BeNil())

		down.Store(false)
		w1.Pull(ctx)
		ps = w1.Peers()
		Expect(ps).To(HaveLen(1))
		Expect(ps[0].OK).To(BeTrue())
		Expect(ps[0].Rows).To(Equal(1))
		Expect(ps[0].Cursor).To(Equal(&cache.Cursor{MS: peer.Features.Cache["cluster"].MS, Key: "k1"}))
		Expect(ps[0].LastError).To(ContainSubstring("503"), "the latest failure stays")
		Expect(ps[0].LastPull).NotTo(BeZero())
	})
})
