// Specs of Open, Close and Run in one process: the wiring, the routes the
// worker serves, the Go API and the clean stop.

package worker_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/drakkar/worker"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	_ "modernc.org/sqlite"
)

// testConfig is a worker w1 of cluster c1 in fresh folders, on a free port.
func testConfig(sets ...string) worker.Config {
	dir := GinkgoT().TempDir()
	base := []string{"worker.name=w1", "cluster.name=c1", "storage.dir=" + filepath.Join(dir, "storage"),
		"shared.dir=" + filepath.Join(dir, "shared"), "ui.addr=127.0.0.1:0", "cache.enabled=true"}
	cfg, err := worker.Load(worker.LoadOptions{Sets: append(base, sets...)})
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}

var _ = Describe("A worker", func() {
	ctx := context.Background()

	It("records through the Go API and, on Close, seals the live file into its cluster's history and marks its card stopped", func() {
		cfg := testConfig()
		w, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		live := w.Recorder().LiveFile()
		Expect(live).To(BeAnExistingFile())
		w.Record(recorder.NewEvent(recorder.KindTaskStarted, time.Now()))
		Expect(w.Cache().Set(ctx, "k", `"v"`, cache.ScopeCluster, 0)).To(Succeed())
		e, ok, err := w.Cache().Get(ctx, "k")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(e.Value).To(Equal(`"v"`))

		Expect(w.Close(ctx)).To(Succeed())
		Expect(live).NotTo(BeAnExistingFile())
		sealed := filepath.Join(cfg.Recorder.HistoryDir(), filepath.Base(live))
		Expect(sealed).To(BeAnExistingFile())
		Expect(sealed + ".meta.json").To(BeAnExistingFile())
		b, err := os.ReadFile(filepath.Join(cfg.Recorder.Shared(), "fleet", "workers", "w1.json"))
		Expect(err).NotTo(HaveOccurred())
		card, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(card.State).To(Equal(registry.StateStopped))
		Expect(card.URL).To(Equal(w.URL()))
		Expect(card.Cluster).To(Equal("c1"))
		Expect(w.Close(ctx)).To(Succeed(), "Close is idempotent")
	})

	It("seals the live file but leaves it in storage.dir when the drain time is already used up", func() {
		cfg := testConfig("executor.drain_timeout_seconds=0.000001")
		w, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		live := w.Recorder().LiveFile()
		w.Record(recorder.NewEvent(recorder.KindTaskStarted, time.Now()))
		Expect(w.Close(ctx)).To(Succeed())
		Expect(live).To(BeAnExistingFile(), "no time was left to move it: the next start moves it as a leftover")
		Expect(live+"-wal").NotTo(BeAnExistingFile(), "it was sealed")
		Expect(filepath.Join(cfg.Recorder.HistoryDir(), filepath.Base(live))).NotTo(BeAnExistingFile())
		db, err := sql.Open("sqlite", "file:"+live+"?mode=ro&immutable=1")
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var n int
		Expect(db.QueryRow("SELECT count(*) FROM events").Scan(&n)).To(Succeed())
		Expect(n).To(Equal(1), "the final flush ran though the drain time was up")
	})

	It("serves health, readiness and every component's metrics at the card's URL", func() {
		w, err := worker.Open(ctx, testConfig(), worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close, ctx)
		code, _ := get(w.URL() + "/healthz")
		Expect(code).To(Equal(http.StatusOK))
		code, body := get(w.URL() + "/readyz")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(MatchJSON(`{"status":"ready"}`))
		code, body = get(w.URL() + "/metrics")
		Expect(code).To(Equal(http.StatusOK))
		for _, name := range []string{"drakkar_recorder_unsealed_files", "drakkar_recorder_buffer_events",
			"drakkar_recorder_archive_failures_total", "drakkar_cache_dirty_entries", "go_goroutines"} {
			Expect(body).To(ContainSubstring(name))
		}
	})

	It("serves the peer cache exchange without a token", func() {
		w, err := worker.Open(ctx, testConfig("ui.auth_token=t0k"), worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close, ctx)
		code, body := get(w.URL() + cache.ChangesPath + "?scopes=cluster")
		Expect(code).To(Equal(http.StatusOK))
		var page map[string]any
		Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
		Expect(page).To(HaveKey("rows"))
	})

	It("mounts the debug API behind ui.auth_token, with its config", func() {
		w, err := worker.Open(ctx, testConfig("ui.auth_token=t0k", "ui.merge_enabled=false"), worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close, ctx)
		code, body := get(w.URL() + "/api/v1/debug/databases")
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(body).To(MatchJSON(`{"detail":"Invalid or missing auth token"}`))
		code, body = get(w.URL() + "/api/v1/debug/databases?token=t0k")
		Expect(code).To(Equal(http.StatusOK))
		var dbs struct {
			Own []struct {
				Kind string `json:"kind"`
			} `json:"own"`
		}
		Expect(json.Unmarshal([]byte(body), &dbs)).To(Succeed())
		Expect(dbs.Own).To(ContainElement(HaveField("Kind", "live")))
		resp, err := http.Post(w.URL()+"/api/v1/debug/merge?token=t0k", "application/json", strings.NewReader(`{"filenames":["a.db","b.db"]}`))
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), "ui.merge_enabled: false reaches the merge route")
	})

	It("carries the cache's features on its first card, and exports the peer sync failures at 0 before any", func() {
		cfg := testConfig("fleet.registry.heartbeat_seconds=3600")
		w, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close, ctx)
		b, err := os.ReadFile(filepath.Join(cfg.Recorder.Shared(), "fleet", "workers", "w1.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(`"features":{"cache":{}}`))
		card, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(card.Features.Cache).NotTo(BeNil())
		code, body := get(w.URL() + "/metrics")
		Expect(code).To(Equal(http.StatusOK))
		for _, reason := range []string{"request", "status", "page", "apply"} {
			Expect(body).To(ContainSubstring(`drakkar_cache_peer_sync_failures_total{reason="` + reason + `"} 0`))
		}
	})

	It("refuses to listen off the loopback without ui.auth_token, creating nothing", func() {
		cfg := testConfig("ui.addr=0.0.0.0:0")
		_, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).To(MatchError(worker.ErrConfig))
		Expect(err.Error()).To(ContainSubstring("ui.insecure_listen"))
		Expect(cfg.Recorder.StorageDir).NotTo(BeAnExistingFile())
		Expect(cfg.Recorder.SharedDir).NotTo(BeAnExistingFile())
	})

	It("warns when the debug API listens off the loopback interface with ui.insecure_listen", func() {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		w, err := worker.Open(ctx, testConfig("ui.addr=0.0.0.0:0", "ui.insecure_listen=true"), worker.Options{Logger: log})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close, ctx)
		Expect(logs.String()).To(MatchRegexp(`level=WARN msg=debug_api_non_loopback addr=\S+:\d+ auth_token_set=false`))
		host, err := os.Hostname()
		Expect(err).NotTo(HaveOccurred())
		Expect(w.URL()).To(HavePrefix("http://"+host+":"), "peers cannot dial an unspecified address")
	})

	It("runs in memory-only mode without files, and still answers", func() {
		cfg, err := worker.Load(worker.LoadOptions{Sets: []string{"worker.name=m", "ui.addr=127.0.0.1:0"}})
		Expect(err).NotTo(HaveOccurred())
		w, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Recorder().LiveFile()).To(BeEmpty())
		Expect(w.Registry()).To(BeNil())
		w.Record(recorder.NewEvent(recorder.KindTaskStarted, time.Now()))
		code, _ := get(w.URL() + "/healthz")
		Expect(code).To(Equal(http.StatusOK))
		Expect(w.Close(ctx)).To(Succeed())
	})

	It("reports not ready with the reason once it is stopping", func() {
		w, err := worker.Open(ctx, testConfig(), worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Ready()).To(BeEmpty())
		Expect(w.Close(ctx)).To(Succeed())
		Expect(w.Ready()).To(ConsistOf("stopping"))
	})

	It("runs the cache without any recorder file when ui.enabled is false", func() {
		cfg := testConfig("ui.enabled=false")
		w, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Recorder().LiveFile()).To(BeEmpty())
		Expect(w.Cache().Set(ctx, "k", "1", cache.ScopeLocal, 0)).To(Succeed())
		Expect(w.Close(ctx)).To(Succeed())
		Expect(filepath.Join(cfg.Recorder.StorageDir, "w1-cache.db")).To(BeAnExistingFile())
		dbs, err := filepath.Glob(filepath.Join(cfg.Recorder.StorageDir, "w1-2*.db"))
		Expect(err).NotTo(HaveOccurred())
		Expect(dbs).To(BeEmpty())
		Expect(filepath.Join(cfg.Recorder.StorageDir, "w1.watchdog")).NotTo(BeAnExistingFile())
	})

	It("fails on an address in use before it creates anything, and a failing debug API closes what was opened", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		cfg := testConfig("ui.addr=" + ln.Addr().String())
		_, err = worker.Open(ctx, cfg, worker.Options{})
		Expect(err).To(MatchError(ContainSubstring("listen on ui.addr")))
		Expect(cfg.Recorder.StorageDir).NotTo(BeAnExistingFile())

		cfg = testConfig()
		_, err = worker.Open(ctx, cfg, worker.Options{API: func(worker.APIDeps) (http.Handler, error) {
			return nil, errors.New("no api")
		}})
		Expect(err).To(MatchError(ContainSubstring("no api")))
		again, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred(), "a later Open of the same worker works")
		Expect(again.Ready()).To(BeEmpty())
		Expect(again.Close(ctx)).To(Succeed())
	})

	It("refuses an invalid configuration before it creates anything", func() {
		cfg := testConfig()
		cfg.Recorder.WorkerName = ""
		_, err := worker.Open(ctx, cfg, worker.Options{})
		Expect(err).To(MatchError(worker.ErrConfig))
		Expect(cfg.Recorder.StorageDir).NotTo(BeAnExistingFile())
	})

	It("runs until its context ends, then stops cleanly", func() {
		cfg := testConfig()
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- worker.Run(rctx, cfg, worker.Options{}) }()
		cards := filepath.Join(cfg.Recorder.Shared(), "fleet", "workers", "w1.json")
		Eventually(cards).Should(BeAnExistingFile())
		b, err := os.ReadFile(cards)
		Expect(err).NotTo(HaveOccurred())
		card, err := registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { code, _ := get(card.URL + "/readyz"); return code }).Should(Equal(http.StatusOK))
		cancel()
		Eventually(done).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
		b, err = os.ReadFile(cards)
		Expect(err).NotTo(HaveOccurred())
		card, err = registry.DecodeCard(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(card.State).To(Equal(registry.StateStopped))
	})
})
