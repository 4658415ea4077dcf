// Specs of the registry: the card's bytes and decoding, publishing,
// peers and their liveness on the file server's clock.

package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/registry"
)

var ctx = context.Background()

var t0 = time.Date(2026, 10, 13, 8, 0, 0, 123456000, time.UTC)

func card() registry.Card {
	return registry.Card{Version: 1, Worker: "search-1", Instance: "0123456789abcdef", Cluster: "search hot",
		URL: "http://10.0.0.7:8081", StartedAt: t0, PublishedAt: t0.Add(time.Second), State: registry.StateRunning,
		Features: registry.Features{Cache: map[string]registry.Mark{"global": {MS: 17, Key: "k<&>"}}}}
}

func open(dir, worker string, opts registry.Options) *registry.Registry {
	opts.Dir, opts.Worker, opts.NoLoops = dir, worker, true
	r, err := registry.Open(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = r.Close(context.Background()) })
	return r
}

var _ = Describe("Registry cards", func() {
	It("are canonical JSON with a version, and decode to the same card", func() {
		b, err := card().Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(`{"cluster":"search hot","features":{"cache":{"global":{"key":"k<&>","ms":17}}},` +
			`"instance":"0123456789abcdef","published_at":"2026-10-13T08:00:01.123456Z","started_at":"2026-10-13T08:00:00.123456Z",` +
			`"state":"running","url":"http://10.0.0.7:8081","version":1,"worker":"search-1"}`))
		back, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(card()))
	})

	It("carry the cache's resync count only when it is above 0, and decode it", func() {
		c := card()
		c.Features.CacheResync = 3
		b, err := c.Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(`"features":{"cache":{"global":{"key":"k<&>","ms":17}},"cache_resync":3}`))
		back, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(c))
		_, err = registry.DecodeCard([]byte(strings.Replace(string(b), `"cache_resync":3`, `"cache_resync":-1`, 1)))
		Expect(err).To(MatchError(registry.ErrBadCard))
	})

	It("say features {} when the exchange is off and {\"cache\": {}} when it is on with nothing to pull", func() {
		c := card()
		c.Features = registry.Features{}
		b, _ := c.Encode()
		Expect(string(b)).To(ContainSubstring(`"features":{}`))
		c.Features = registry.Features{Cache: map[string]registry.Mark{}}
		b, _ = c.Encode()
		Expect(string(b)).To(ContainSubstring(`"features":{"cache":{}}`))
		back, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Features.Cache).NotTo(BeNil())
	})

	DescribeTable("refuses a card that is not version 1's shape",
		func(text string) {
			_, err := registry.DecodeCard([]byte(text))
			Expect(err).To(MatchError(registry.ErrBadCard))
		},
		Entry("not JSON", `{"version":`),
		Entry("a missing field", `{"version":1,"worker":"w"}`),
		Entry("another version", `{"cluster":"","features":{},"instance":"","published_at":"2026-10-13T08:00:01.123456Z","started_at":"2026-10-13T08:00:00.123456Z","state":"running","url":"","version":2,"worker":"w"}`),
		Entry("an unknown state", `{"cluster":"","features":{},"instance":"","published_at":"2026-10-13T08:00:01.123456Z","started_at":"2026-10-13T08:00:00.123456Z","state":"gone","url":"","version":1,"worker":"w"}`),
		Entry("a bad time", `{"cluster":"","features":{},"instance":"","published_at":"2026-10-13 08:00:01","started_at":"2026-10-13T08:00:00.123456Z","state":"running","url":"","version":1,"worker":"w"}`),
		Entry("a bad mark", `{"cluster":"","features":{"cache":{"global":"x"}},"instance":"","published_at":"2026-10-13T08:00:01.123456Z","started_at":"2026-10-13T08:00:00.123456Z","state":"running","url":"","version":1,"worker":"w"}`),
		Entry("a worker with a slash", `{"cluster":"","features":{},"instance":"","published_at":"2026-10-13T08:00:01.123456Z","started_at":"2026-10-13T08:00:00.123456Z","state":"running","url":"","version":1,"worker":"a/b"}`),
	)
})

var _ = Describe("The registry", func() {
	var dir string
	BeforeEach(func() { dir = registry.Dir("", GinkgoT().TempDir()) })

	It("publishes the card 0600 at start, with the features of the moment, and lists the others as peers", func() {
		marks := map[string]registry.Mark{}
		a := open(dir, "a", registry.Options{Cluster: "c", URL: "http://a", Features: func() registry.Features {
			return registry.Features{Cache: marks}
		}})
		fi, err := os.Stat(a.CardPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		b := open(dir, "b", registry.Options{Cluster: "d"})
		Expect(b.Peers()).To(HaveLen(1))
		Expect(b.Peers()[0].Worker).To(Equal("a"))
		Expect(b.Peers()[0].Online).To(BeTrue())
		Expect(b.Peers()[0].Features.Cache).To(BeEmpty())

		marks["global"] = registry.Mark{MS: 5, Key: "k"}
		Expect(a.Publish(ctx)).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Features.Cache).To(Equal(map[string]registry.Mark{"global": {MS: 5, Key: "k"}}))
		Expect(a.Refresh(ctx)).To(Succeed())
		Expect(a.Peers()[0].Worker).To(Equal("b"))
		Expect(a.Peers()[0].Features.Cache).To(BeNil())
	})

	It("judges a peer offline by its card's age on the file server's clock, and after a clean stop", func() {
		a := open(dir, "a", registry.Options{})
		b := open(dir, "b", registry.Options{OfflineAfter: 30 * time.Second})
		// The file server's clock is the marker's mtime: age the card against it.
		now, err := registry.ServerNow(dir, b.Instance())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chtimes(a.CardPath(), now, now.Add(-29*time.Second))).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Online).To(BeTrue())
		Expect(os.Chtimes(a.CardPath(), now, now.Add(-40*time.Second))).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Online).To(BeFalse())
		Expect(b.Peers()[0].Age).To(BeNumerically(">=", 40*time.Second))

		Expect(a.Publish(ctx)).To(Succeed())
		Expect(a.Close(ctx)).To(Succeed())
		Expect(registry.ClockPath(dir, a.Instance())).NotTo(BeAnExistingFile())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].State).To(Equal(registry.StateStopped))
		Expect(b.Peers()[0].Online).To(BeFalse())
	})

	It("skips unreadable cards, cards naming another worker, and dot files", func() {
		b := open(dir, "b", registry.Options{})
		Expect(os.WriteFile(filepath.Join(dir, "junk.json"), []byte("{"), 0o600)).To(Succeed())
		bytes, _ := card().Encode()
		Expect(os.WriteFile(filepath.Join(dir, "impostor.json"), bytes, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, ".search-1.json"), bytes, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "search-1.json"), bytes, 0o600)).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()).To(HaveLen(1))
		Expect(b.Peers()[0].Worker).To(Equal("search-1"))
	})

	It("leaves a live card of another instance of its worker name alone, reports it, and its stop does not touch it", func() {
		a := open(dir, "w", registry.Options{URL: "http://a"})
		before, err := os.ReadFile(a.CardPath())
		Expect(err).NotTo(HaveOccurred())
		b := open(dir, "w", registry.Options{URL: "http://b"})
		Expect(b.Duplicate()).NotTo(BeNil())
		Expect(b.Duplicate().Instance).To(Equal(a.Instance()))
		Expect(b.Duplicate().URL).To(Equal("http://a"))
		Expect(b.Publish(ctx)).To(Succeed())
		Expect(os.ReadFile(a.CardPath())).To(Equal(before))
		Expect(b.Close(ctx)).To(Succeed())
		Expect(os.ReadFile(a.CardPath())).To(Equal(before), "b's stop must not mark a's card stopped")
		Expect(a.Duplicate()).To(BeNil())
		Expect(a.Close(ctx)).To(Succeed())
		b2, err := os.ReadFile(a.CardPath())
		Expect(err).NotTo(HaveOccurred())
		c, err := registry.DecodeCard(b2)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Instance).To(Equal(a.Instance()))
		Expect(c.State).To(Equal(registry.StateStopped))
	})

	It("takes the card over once the other instance's card is stopped or stale", func() {
		a := open(dir, "w", registry.Options{})
		b := open(dir, "w", registry.Options{OfflineAfter: 30 * time.Second})
		Expect(b.Duplicate()).NotTo(BeNil())
		now, err := registry.ServerNow(dir, b.Instance())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chtimes(a.CardPath(), now, now.Add(-40*time.Second))).To(Succeed())
		Expect(b.Publish(ctx)).To(Succeed())
		Expect(b.Duplicate()).To(BeNil())
		raw, err := os.ReadFile(a.CardPath())
		Expect(err).NotTo(HaveOccurred())
		c, err := registry.DecodeCard(raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Instance).To(Equal(b.Instance()))
		Expect(a.Close(ctx)).To(Succeed())
		raw2, err := os.ReadFile(a.CardPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(raw2).To(Equal(raw), "a no longer holds the card: its stop leaves b's")
	})

	It("settles two instances that both hold the card on the smaller instance id", func() {
		x := open(dir, "w", registry.Options{Instance: "1111111111111111"})
		// y published at the same moment: it wrote over x's card.
		y := open(dir, "w", registry.Options{Instance: "2222222222222222"})
		Expect(y.Duplicate()).NotTo(BeNil())
		Expect(os.Remove(y.CardPath())).To(Succeed())
		Expect(y.Publish(ctx)).To(Succeed())
		Expect(y.Duplicate()).To(BeNil())
		Expect(x.Publish(ctx)).To(Succeed(), "x held the card and its id is smaller: it keeps it")
		Expect(x.Duplicate()).To(BeNil())
		Expect(y.Publish(ctx)).To(Succeed())
		Expect(y.Duplicate()).NotTo(BeNil())
		raw, err := os.ReadFile(x.CardPath())
		Expect(err).NotTo(HaveOccurred())
		c, err := registry.DecodeCard(raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Instance).To(Equal("1111111111111111"))
	})

	It("does not trust a card stamped more than offline_after ahead of the file server's clock, nor report it ahead of now", func() {
		a := open(dir, "a", registry.Options{})
		b := open(dir, "b", registry.Options{OfflineAfter: 30 * time.Second})
		now, err := registry.ServerNow(dir, b.Instance())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chtimes(a.CardPath(), now, now.Add(10*time.Minute))).To(Succeed())
		peers, err := registry.ReadPeers(ctx, dir, b.Instance(), 30*time.Second, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(peers[0].Worker).To(Equal("a"))
		Expect(peers[0].Online).To(BeFalse())
		Expect(peers[0].LastSeen).NotTo(BeTemporally(">", now.Add(5*time.Second)))
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Online).To(BeFalse())
	})

	It("ages a card whose time lies ahead from when it was first read", func() {
		a := open(dir, "a", registry.Options{})
		b := open(dir, "b", registry.Options{OfflineAfter: 30 * time.Second})
		now, err := registry.ServerNow(dir, b.Instance())
		Expect(err).NotTo(HaveOccurred())
		ahead := now.Add(20 * time.Second)
		Expect(os.Chtimes(a.CardPath(), ahead, ahead)).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Online).To(BeTrue())
		// The file server's clock runs 40 s on; the card is not rewritten.
		DeferCleanup(registry.ShiftServerClock(40 * time.Second))
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()[0].Online).To(BeFalse())
		Expect(b.Peers()[0].Age).To(BeNumerically(">=", 40*time.Second-time.Second))
	})

	It("leaves out a card that carries this worker's instance id under another name", func() {
		b := open(dir, "b", registry.Options{})
		c := card()
		c.Worker, c.Instance = "evil", b.Instance()
		raw, err := c.Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "evil.json"), raw, 0o600)).To(Succeed())
		Expect(b.Refresh(ctx)).To(Succeed())
		Expect(b.Peers()).To(BeEmpty())
	})

	It("refuses options it cannot run with", func() {
		for _, o := range []registry.Options{{}, {Dir: dir}, {Dir: dir, Worker: "a/b"}, {Dir: dir, Worker: ".x"}, {Dir: dir, Worker: "w", Refresh: -1}} {
			_, err := registry.Open(ctx, o)
			Expect(err).To(MatchError(registry.ErrConfig))
		}
	})
})
