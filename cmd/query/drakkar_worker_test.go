// End to end: three `query drakkar worker` processes (two clusters) on one
// shared folder, rotating every 3.6 s, fed by `query drakkar record`, and
// looked at through their debug API, as an operator meets them.

package main_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// fleetToken is the fleet's ui.auth_token.
const fleetToken = "fleet-t0ken"

// workerYAML is a worker's configuration: rotation every 3.6 s, one-minute
// archive windows due 3.6 s after they end (archive on or off), fast
// registry heartbeats.
func workerYAML(shared string, archive bool) string {
	return fmt.Sprintf(`shared:
  dir: %s
ui:
  addr: 127.0.0.1:0
  auth_token: %s
  recorder:
    rotation_interval_hours: 0.001
    flush_interval_seconds: 0.2
history:
  archive:
    enabled: %t
    window_hours: 0.016666666666666666
    due_after_hours: 0.001
    retention_days: 1
    lock_stale_seconds: 60
fleet:
  registry:
    heartbeat_seconds: 1
    refresh_seconds: 1
    offline_after_seconds: 4
executor:
  drain_timeout_seconds: 20
`, shared, fleetToken, archive)
}

// fleetWorker is one running `query drakkar worker`.
type fleetWorker struct {
	name, cluster, storage, shared string
	session                        *gexec.Session
	url                            string
}

func startWorker(dir, shared, name, cluster, config string) *fleetWorker {
	w := &fleetWorker{name: name, cluster: cluster, storage: filepath.Join(dir, "storage-"+name), shared: shared}
	cmd := exec.Command(queryBin, "drakkar", "worker", "--config", config, "--name", name, "--cluster", cluster, "--storage", w.storage)
	cmd.Env = withoutStoreEnv()
	var err error
	w.session, err = gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { w.session.Kill().Wait(10 * time.Second) })
	Eventually(func() bool { return listeningRE.Match(w.session.Err.Contents()) }).
		WithTimeout(30 * time.Second).Should(BeTrue())
	w.url = "http://" + string(listeningRE.FindSubmatch(w.session.Err.Contents())[1])
	return w
}

// record spools NDJSON events into the worker's live file.
func (w *fleetWorker) record(ndjson string) {
	r := runQuery(w.storage, nil, ndjson, "drakkar", "record", "--storage", w.storage, "--shared", w.shared,
		"--name", w.name, "--cluster", w.cluster)
	ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
}

// call makes an authenticated request and returns the status and body.
func (w *fleetWorker) call(method, path, body string) (int, []byte) {
	req, err := http.NewRequest(method, w.url+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+fleetToken)
	resp, err := client.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, b
}

// getJSON GETs path (200 expected) into v.
func (w *fleetWorker) getJSON(path string, v any) {
	code, b := w.call(http.MethodGet, path, "")
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(b))
	ExpectWithOffset(1, json.Unmarshal(b, v)).To(Succeed())
}

// download GETs path into a file of dir and returns its path.
func (w *fleetWorker) download(dir, path, name string) string {
	code, b := w.call(http.MethodGet, path, "")
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(b))
	p := filepath.Join(dir, name)
	ExpectWithOffset(1, os.WriteFile(p, b, 0o600)).To(Succeed())
	return p
}

// sqlite runs the stock sqlite3 shell on a file.
func sqlite3CLI(file, sql string) string {
	out, err := exec.Command("sqlite3", "-readonly", file, sql).CombinedOutput()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
	return strings.TrimSpace(string(out))
}

type dbList struct {
	Own []struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"own"`
	History struct {
		Folders []struct {
			Name  string `json:"name"`
			Files []struct {
				Path string         `json:"path"`
				Kind string         `json:"kind"`
				Meta map[string]any `json:"meta"`
			} `json:"files"`
		} `json:"folders"`
	} `json:"history"`
}

// sealed lists the sealed files of a cluster folder with their meta.
func (l dbList) sealed(folder string) (paths []string, metas []map[string]any) {
	for _, f := range l.History.Folders {
		if f.Name != folder {
			continue
		}
		for _, file := range f.Files {
			if file.Kind == "sealed" {
				paths, metas = append(paths, file.Path), append(metas, file.Meta)
			}
		}
	}
	return paths, metas
}

type workerItem struct {
	WorkerName  string `json:"worker_name"`
	ClusterName string `json:"cluster_name"`
	Online      bool   `json:"online"`
}

func onlineOf(w *fleetWorker) map[string]bool {
	var items []workerItem
	w.getJSON("/api/v1/workers", &items)
	out := map[string]bool{}
	for _, it := range items {
		out[it.WorkerName] = it.Online
	}
	return out
}

var _ = Describe("query drakkar worker", Label("integration"), func() {
	It("runs a three-worker fleet on one shared folder that the debug API shows, merges, archives and stops cleanly", func() {
		if _, err := exec.LookPath("sqlite3"); err != nil {
			Skip("the stock sqlite3 shell is not installed")
		}
		dir := GinkgoT().TempDir()
		shared := filepath.Join(dir, "shared")
		alphaCfg := writeFile(dir, "alpha.yaml", workerYAML(shared, true))
		betaCfg := writeFile(dir, "beta.yaml", workerYAML(shared, false))
		a := startWorker(dir, shared, "a", "alpha", alphaCfg)
		b := startWorker(dir, shared, "b", "alpha", alphaCfg)
		c := startWorker(dir, shared, "c", "beta", betaCfg)

		By("recording an early event into c and, all along, events into a and b")
		c.record(`{"event":"task_completed","partition":7,"offset":1001,"task_id":"early"}` + "\n")
		stop := make(chan struct{})
		fed := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(fed)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(150 * time.Millisecond):
				}
				for _, w := range []*fleetWorker{a, b} {
					w.record(fmt.Sprintf(`{"event":"task_started","partition":1,"offset":%d,"task_id":"t%d"}`+"\n", i, i))
				}
			}
		}()
		stopFeed := sync.OnceFunc(func() { close(stop); <-fed })
		DeferCleanup(stopFeed)

		By("listing the sealed files of beta with their meta once c rotated at least twice")
		var list dbList
		Eventually(func() int {
			list = dbList{}
			c.getJSON("/api/v1/debug/databases", &list)
			paths, _ := list.sealed("beta")
			return len(paths)
		}).WithTimeout(40 * time.Second).WithPolling(500 * time.Millisecond).Should(BeNumerically(">=", 3))
		paths, metas := list.sealed("beta")
		for _, m := range metas {
			Expect(m).To(HaveKeyWithValue("worker", "c"))
			Expect(m).To(HaveKeyWithValue("cluster", "beta"))
			Expect(m).To(HaveKey("tables"))
		}
		Expect(list.Own).To(ContainElement(HaveField("Kind", "live")))

		By("tracing the early event through c's sealed history")
		var tr []map[string]any
		c.getJSON("/api/v1/debug/trace?partition=7&offset=1001&history=1", &tr)
		Expect(tr).To(ContainElement(And(HaveKeyWithValue("task_id", "early"), HaveKeyWithValue("worker_name", "c"))))

		By("merging two sealed files and opening the download in sqlite3")
		body, err := json.Marshal(map[string]any{"filenames": paths[:2]})
		Expect(err).NotTo(HaveOccurred())
		code, ans := c.call(http.MethodPost, "/api/v1/debug/merge", string(body))
		Expect(code).To(Equal(http.StatusOK), string(ans))
		var merged struct {
			Path        string   `json:"path"`
			SourceFiles []string `json:"source_files"`
		}
		Expect(json.Unmarshal(ans, &merged)).To(Succeed())
		Expect(merged.SourceFiles).To(HaveLen(2))
		mergedFile := c.download(dir, "/api/v1/debug/download/"+merged.Path, "merged.db")
		Expect(sqlite3CLI(mergedFile, "PRAGMA integrity_check;")).To(Equal("ok"))
		Expect(sqlite3CLI(mergedFile, "SELECT count(*) FROM workers;")).To(Equal("2"))

		By("snapshotting a's live file while events keep arriving")
		live := a.download(dir, "/api/v1/debug/download-live", "live.db")
		Expect(sqlite3CLI(live, "PRAGMA integrity_check;")).To(Equal("ok"))
		Expect(sqlite3CLI(live, "PRAGMA journal_mode;")).To(Equal("delete"))

		By("listing all three workers online")
		Eventually(func() map[string]bool { return onlineOf(a) }).WithTimeout(10 * time.Second).
			Should(Equal(map[string]bool{"a": true, "b": true, "c": true}))

		By("waiting for alpha's archive pass to publish an archive that gunzips into a merged database")
		var arch struct {
			Archives []struct {
				Cluster string `json:"cluster"`
				Path    string `json:"path"`
			} `json:"archives"`
		}
		Eventually(func() int {
			a.getJSON("/api/v1/debug/archives", &arch)
			return len(arch.Archives)
		}).WithTimeout(100 * time.Second).WithPolling(time.Second).Should(BeNumerically(">=", 1))
		Expect(arch.Archives[0].Cluster).To(Equal("alpha"))
		gz := a.download(dir, "/api/v1/debug/download/"+arch.Archives[0].Path, "archive.db.gz")
		raw, err := os.ReadFile(gz)
		Expect(err).NotTo(HaveOccurred())
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		Expect(err).NotTo(HaveOccurred())
		db, err := io.ReadAll(zr)
		Expect(err).NotTo(HaveOccurred())
		unzipped := filepath.Join(dir, "archive.db")
		Expect(os.WriteFile(unzipped, db, 0o600)).To(Succeed())
		Expect(sqlite3CLI(unzipped, "PRAGMA integrity_check;")).To(Equal("ok"))
		Expect(sqlite3CLI(unzipped, "SELECT count(*) > 0 FROM events;")).To(Equal("1"))

		By("seeing b offline after SIGKILL")
		stopFeed()
		b.session.Kill()
		Eventually(b.session).WithTimeout(10 * time.Second).Should(gexec.Exit())
		Eventually(func() map[string]bool { return onlineOf(a) }).WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).
			Should(Equal(map[string]bool{"a": true, "b": false, "c": true}))

		By("stopping a with SIGTERM: exit 0 and its live file sealed into alpha's history")
		list = dbList{}
		a.getJSON("/api/v1/debug/databases", &list)
		var liveName string
		for _, f := range list.Own {
			if f.Kind == "live" {
				liveName = f.Name
			}
		}
		Expect(liveName).NotTo(BeEmpty())
		a.session.Signal(syscall.SIGTERM)
		Eventually(a.session).WithTimeout(40 * time.Second).Should(gexec.Exit(0))
		sealed := filepath.Join(shared, "history", "alpha", liveName)
		Expect(sealed).To(BeAnExistingFile())
		Expect(filepath.Join(a.storage, liveName)).NotTo(BeAnExistingFile())
		Expect(sqlite3CLI(sealed, "PRAGMA journal_mode;")).To(Equal("delete"))
		c.session.Signal(syscall.SIGINT)
		Eventually(c.session).WithTimeout(40 * time.Second).Should(gexec.Exit(0))
	})
})

var _ = Describe("query drakkar worker's configuration", func() {
	DescribeTable("fails with code invalid naming the key, before it creates anything",
		func(yamlText string, env []string, args []string, want string) {
			dir := GinkgoT().TempDir()
			cfg := writeFile(dir, "w.yaml", yamlText)
			storage := filepath.Join(dir, "storage")
			r := runQuery(dir, env, "", append([]string{"drakkar", "worker", "--config", cfg, "--storage", storage, "--addr", "127.0.0.1:0"}, args...)...)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: invalid: "))
			Expect(r.stderr).To(ContainSubstring(want))
			Expect(storage).NotTo(BeAnExistingFile())
		},
		Entry("an unknown key", "worker: {name: w}\nui: {colour: red}\n", nil, nil, "ui.colour: unknown key"),
		Entry("a moved key", "worker: {name: w}\nui: {db_dir: /x}\n", nil, nil, "ui.db_dir: this key moved to storage.dir"),
		Entry("a bad value from the environment", "worker: {name: w}\n", []string{"DRAKKAR_UI__RECORDER__MAX_BUFFER=10"}, nil,
			"ui.recorder.max_buffer: must be at least 1000"),
		Entry("a bad --set", "worker: {name: w}\n", nil, []string{"--set", "executor.drain_timeout_seconds=soon"}, "executor.drain_timeout_seconds"),
		Entry("no worker name", "ui: {merge_enabled: true}\n", nil, nil, "worker.name"),
	)

	It("answers /readyz 503 not_owner in a second process started with a running worker's name", func() {
		dir := GinkgoT().TempDir()
		cfg := writeFile(dir, "w.yaml", "ui:\n  addr: 127.0.0.1:0\n")
		shared := filepath.Join(dir, "shared")
		first := startWorker(dir, shared, "w", "c", cfg)
		second := startWorker(dir, shared, "w", "c", cfg)
		code, body := second.call(http.MethodGet, "/readyz", "")
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		Expect(body).To(MatchJSON(`{"status":"not_ready","reasons":["not_owner","duplicate_worker"]}`))
		code, body = first.call(http.MethodGet, "/readyz", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(MatchJSON(`{"status":"ready"}`))
		for _, w := range []*fleetWorker{second, first} {
			w.session.Signal(syscall.SIGTERM)
			Eventually(w.session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
		}
	})

	It("keeps a second process with a running worker's name on one shared folder off the card: not ready, the card never flips, its stop leaves the card", func() {
		dir := GinkgoT().TempDir()
		shared := filepath.Join(dir, "shared")
		// A long offline_after: a first worker slowed down on a loaded
		// machine must not look stale to the second.
		cfg := writeFile(dir, "w.yaml", strings.Replace(workerYAML(shared, false), "offline_after_seconds: 4", "offline_after_seconds: 120", 1))
		cardPath := filepath.Join(shared, "fleet", "workers", "w.json")
		type card struct {
			Instance string `json:"instance"`
			URL      string `json:"url"`
			State    string `json:"state"`
		}
		readCard := func() card {
			var c card
			b, err := os.ReadFile(cardPath)
			Expect(err).NotTo(HaveOccurred())
			Expect(json.Unmarshal(b, &c)).To(Succeed())
			return c
		}
		first := startWorker(filepath.Join(dir, "a"), shared, "w", "c", cfg)
		mine := readCard()
		Expect(mine.URL).To(Equal(first.url))
		second := startWorker(filepath.Join(dir, "b"), shared, "w", "c", cfg)
		Expect(second.storage).NotTo(Equal(first.storage))
		code, body := second.call(http.MethodGet, "/readyz", "")
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		Expect(body).To(MatchJSON(`{"status":"not_ready","reasons":["duplicate_worker"]}`))
		Expect(string(second.session.Err.Contents())).To(ContainSubstring("msg=registry_duplicate_worker"))
		Expect(string(second.session.Err.Contents())).To(ContainSubstring("other_instance=" + mine.Instance))
		// Heartbeats are every second: across several, the card stays the first's.
		Consistently(readCard).WithTimeout(3500 * time.Millisecond).WithPolling(100 * time.Millisecond).Should(Equal(mine))
		second.session.Signal(syscall.SIGTERM)
		Eventually(second.session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
		Expect(readCard()).To(Equal(mine), "the second's clean stop must not mark the first's card stopped")
		code, _ = first.call(http.MethodGet, "/readyz", "")
		Expect(code).To(Equal(http.StatusOK))
		first.session.Signal(syscall.SIGTERM)
		Eventually(first.session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
		Expect(readCard()).To(Equal(card{Instance: mine.Instance, URL: first.url, State: "stopped"}))
	})

	It("refuses a drakkar record spooled to a running worker with another --cluster or --shared, naming both values", func() {
		dir := GinkgoT().TempDir()
		cfg := writeFile(dir, "w.yaml", "ui:\n  addr: 127.0.0.1:0\n")
		w := startWorker(dir, "", "w", "c", cfg) // shared.dir unset: storage.dir
		record := func(args ...string) result {
			return runQuery(dir, nil, `{"event":"annotation"}`+"\n", append([]string{"drakkar", "record", "--storage", w.storage, "--name", "w"}, args...)...)
		}
		r := record("--cluster", "other")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(Equal(`query: invalid: recorder config: cluster.name "other" differs from "c", the cluster of the running worker "w": its events would go to that cluster's history` + "\n"))
		elsewhere := filepath.Join(dir, "elsewhere")
		r = record("--cluster", "c", "--shared", elsewhere)
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix(`query: invalid: recorder config: shared.dir "` + elsewhere + `" differs from "` + w.storage + `"`))
		Expect(elsewhere).NotTo(BeAnExistingFile())
		r = record("--cluster", "c")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`"spooled":true`))
		w.session.Signal(syscall.SIGTERM)
		Eventually(w.session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
	})

	It("refuses an address off the loopback without ui.auth_token before it creates anything, and runs with --insecure-listen", func() {
		dir := GinkgoT().TempDir()
		storage := filepath.Join(dir, "storage")
		refused := exec.Command(queryBin, "drakkar", "worker", "--name", "w", "--storage", storage, "--addr", "0.0.0.0:0")
		refused.Env = withoutStoreEnv()
		r, err := gexec.Start(refused, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { r.Kill().Wait(10 * time.Second) })
		Eventually(r).WithTimeout(30 * time.Second).Should(gexec.Exit(1))
		stderr := string(r.Err.Contents())
		Expect(stderr).To(HavePrefix("query: invalid: "))
		Expect(stderr).To(ContainSubstring("ui.addr 0.0.0.0:0"))
		Expect(stderr).To(ContainSubstring("--insecure-listen"))
		Expect(storage).NotTo(BeAnExistingFile())

		cmd := exec.Command(queryBin, "drakkar", "worker", "--name", "w", "--storage", storage, "--addr", "0.0.0.0:0", "--insecure-listen")
		cmd.Env = withoutStoreEnv()
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
		Eventually(func() string { return string(session.Err.Contents()) }).WithTimeout(30 * time.Second).Should(ContainSubstring("msg=listening"))
		Expect(string(session.Err.Contents())).To(ContainSubstring("msg=debug_api_non_loopback"))
		session.Signal(syscall.SIGTERM)
		Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
	})

	It("ignores a removed ui.recorder key with a warning and runs", func() {
		dir := GinkgoT().TempDir()
		cfg := writeFile(dir, "w.yaml", "ui:\n  addr: 127.0.0.1:0\n  recorder:\n    retention_hours: 24\n")
		w := startWorker(dir, filepath.Join(dir, "shared"), "w", "c", cfg)
		Expect(string(w.session.Err.Contents())).To(MatchRegexp(`level=WARN msg=config_key_ignored key=ui.recorder.retention_hours`))
		w.session.Signal(syscall.SIGTERM)
		Eventually(w.session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
	})
})
