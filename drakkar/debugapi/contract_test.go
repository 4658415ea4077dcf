// Contract specs: exact statuses, headers and bodies of every route.

package debugapi_test

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/debugapi"
)

var _ = Describe("health, readiness, metrics and auth", func() {
	It("answers /healthz ok and /readyz ready or not_ready with its reasons", func() {
		var reasons []string
		h := newAPI(debugapi.Options{Config: debugapi.DefaultConfig(), Ready: func() []string { return reasons }})
		a := get(h, "/healthz")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`{"status":"ok"}`))
		Expect(a.Header.Get("Content-Type")).To(Equal("application/json"))
		Expect(string(get(h, "/readyz").Body)).To(Equal(`{"status":"ready"}`))
		reasons = []string{"recorder not open", "registry not published"}
		a = get(h, "/readyz")
		Expect(a.Status).To(Equal(503))
		Expect(string(a.Body)).To(Equal(`{"reasons":["recorder not open","registry not published"],"status":"not_ready"}`))
	})

	It("serves the gatherer at /metrics, and 404 without one", func() {
		Expect(get(newAPI(debugapi.Options{}), "/metrics").Status).To(Equal(404))
		reg := prometheus.NewRegistry()
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_recorder_events_total", Help: "x"})
		reg.MustRegister(c)
		c.Add(3)
		a := get(newAPI(debugapi.Options{Metrics: reg}), "/metrics")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(ContainSubstring("drakkar_recorder_events_total 3"))
	})

	It("answers 404 {detail} to an unknown route", func() {
		a := get(newAPI(debugapi.Options{}), "/api/v1/nothing")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"detail":"Not Found"}`))
	})

	Describe("with ui.auth_token", func() {
		var h = func() http.Handler {
			c := debugapi.DefaultConfig()
			c.AuthToken = "s3cret"
			return newAPI(debugapi.Options{Config: c, Ready: func() []string { return nil }})
		}

		DescribeTable("refuses a missing or wrong token with 401",
			func(target string, hdr ...string) {
				a := get(h(), target, hdr...)
				Expect(a.Status).To(Equal(401))
				Expect(string(a.Body)).To(Equal(`{"detail":"Invalid or missing auth token"}`))
			},
			Entry("no token", "/api/v1/debug/databases"),
			Entry("wrong bearer", "/api/v1/debug/databases", "Authorization", "Bearer s3cre"),
			Entry("token without Bearer", "/api/v1/debug/databases", "Authorization", "s3cret"),
			Entry("wrong query token", "/api/v1/workers?token=nope"),
			Entry("metrics too", "/metrics"),
			Entry("unknown routes too", "/api/v1/nothing"),
			Entry("download too", "/api/v1/debug/download/history/a/b.db"),
		)

		DescribeTable("accepts the token as a Bearer header or ?token=",
			func(target string, hdr ...string) {
				Expect(get(h(), target, hdr...).Status).To(Equal(200))
			},
			Entry("bearer", "/api/v1/debug/databases", "Authorization", "Bearer s3cret"),
			Entry("query", "/api/v1/debug/databases?token=s3cret"),
		)

		It("leaves /healthz, /readyz and the peer exchange open", func() {
			Expect(get(h(), "/healthz").Status).To(Equal(200))
			Expect(get(h(), "/readyz").Status).To(Equal(200))
			a := get(h(), "/api/v1/peer/cache/changes?scopes=cluster")
			Expect(a.Status).To(Equal(404))
			Expect(string(a.Body)).To(Equal(`{"error":"The cache exchange is off on this worker"}`))
			a = get(h(), "/api/v1/peer/cache/changes")
			Expect(a.Status).To(Equal(400))
			Expect(string(a.Body)).To(Equal(`{"error":"scopes must be cluster, global or both"}`))
		})
	})
})

var _ = Describe("GET /api/v1/debug/databases", func() {
	It("answers empty lists in memory-only mode", func() {
		rec := openRecorder("", "", "w1")
		a := get(newAPI(debugapi.Options{Config: apiConfig("", "", "w1"), Recorder: rec}), "/api/v1/debug/databases")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`{"own":[],"history":{"folders":[]}}`))
	})

	It("lists the live file with statistics, then history folders and merged, sealed files with their meta", func() {
		storage, shared := tempDirs()
		sealed := sealFile(storage, shared, "w2", started("a", 1, 10, nil), started("b", 1, 11, nil))
		Expect(os.MkdirAll(filepath.Join(shared, "merged"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(shared, "merged", "merged-2026-01-01__00_00_00-0123456789abcdef.db"), []byte("m"), 0o600)).To(Succeed())
		arch := dbfiles.ArchiveName(cluster, mustTime("2026-10-12T00:00:00Z"), mustTime("2026-10-13T00:00:00Z"))
		Expect(os.WriteFile(filepath.Join(shared, "history", "search_hot", arch), []byte("gz"), 0o600)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(shared, "history", "alpha"), 0o700)).To(Succeed())

		rec := openRecorder(storage, shared, "w1")
		rec.Record(started("c", 2, 5, nil))
		Expect(rec.Flush(ctx)).To(Succeed())
		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
		a := get(h, "/api/v1/debug/databases")
		Expect(a.Status).To(Equal(200))
		body := a.JSON().(map[string]any)
		own := body["own"].([]any)
		Expect(own).To(HaveLen(1))
		live := own[0].(map[string]any)
		Expect(live["kind"]).To(Equal("live"))
		Expect(live["name"]).To(Equal(filepath.Base(rec.LiveFile())))
		Expect(live["stats"].(map[string]any)["event_count"]).To(BeNumerically("==", 1))

		folders := body["history"].(map[string]any)["folders"].([]any)
		names := []string{}
		for _, f := range folders {
			names = append(names, f.(map[string]any)["name"].(string))
		}
		Expect(names).To(Equal([]string{"alpha", "search_hot", "merged"}))
		files := folders[1].(map[string]any)["files"].([]any)
		Expect(files).To(HaveLen(2))
		kinds := map[string]map[string]any{}
		for _, f := range files {
			kinds[f.(map[string]any)["kind"].(string)] = f.(map[string]any)
		}
		Expect(kinds["sealed"]["path"]).To(Equal(sealed))
		Expect(kinds["sealed"]["meta"].(map[string]any)["worker"]).To(Equal("w2"))
		Expect(kinds["archive"]["path"]).To(Equal("history/search_hot/" + arch))
		Expect(kinds["archive"]["meta"]).To(BeNil())
		merged := folders[2].(map[string]any)["files"].([]any)[0].(map[string]any)
		Expect(merged["kind"]).To(Equal("merged"))
		Expect(merged["size_bytes"]).To(BeNumerically("==", 1))
	})

	It("shows a replaced meta file's new content and drops a removed one's", func() {
		storage, shared := tempDirs()
		sealed := sealFile(storage, shared, "w2", started("a", 1, 10, nil))
		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1")})
		metaOf := func() any {
			a := get(h, "/api/v1/debug/databases")
			Expect(a.Status).To(Equal(200))
			folders := a.JSON().(map[string]any)["history"].(map[string]any)["folders"].([]any)
			return folders[0].(map[string]any)["files"].([]any)[0].(map[string]any)["meta"]
		}
		Expect(metaOf().(map[string]any)["worker"]).To(Equal("w2"))
		metaPath := filepath.Join(shared, filepath.FromSlash(dbfiles.MetaFileName(sealed)))
		m, err := dbfiles.ReadMeta(metaPath)
		Expect(err).NotTo(HaveOccurred())
		m.Worker = "w2-renamed"
		Expect(dbfiles.WriteMeta(metaPath, m)).To(Succeed())
		Expect(metaOf().(map[string]any)["worker"]).To(Equal("w2-renamed"))
		Expect(os.Remove(metaPath)).To(Succeed())
		Expect(metaOf()).To(BeNil())
	})

	It("refreshes the live file's statistics by reading only the rows past the last id", func() {
		storage, shared := tempDirs()
		rec := openRecorder(storage, shared, "w1")
		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
		for i := 0; i < 3; i++ {
			rec.Record(started("t", 0, int64(i), nil))
		}
		Expect(rec.Flush(ctx)).To(Succeed())
		Expect(debugapi.RowsRead(h)).To(BeZero())
		st := liveStats(h)
		Expect(st["event_count"]).To(BeNumerically("==", 3))
		Expect(debugapi.RowsRead(h)).To(BeEquivalentTo(3))
		rec.Record(started("u", 0, 9, nil))
		Expect(rec.Flush(ctx)).To(Succeed())
		st = liveStats(h)
		Expect(st["event_count"]).To(BeNumerically("==", 4))
		Expect(st["last_id"]).To(BeNumerically("==", 4))
		Expect(debugapi.RowsRead(h)).To(BeEquivalentTo(4))
	})
})

// liveStats returns the stats of the first own file.
func liveStats(h http.Handler) map[string]any {
	a := get(h, "/api/v1/debug/databases")
	Expect(a.Status).To(Equal(200))
	return a.JSON().(map[string]any)["own"].([]any)[0].(map[string]any)["stats"].(map[string]any)
}

var _ = Describe("GET /api/v1/debug/download/{path} and /archives", func() {
	var storage, shared string
	var h http.Handler
	var sealed, arch string

	BeforeEach(func() {
		storage, shared = tempDirs()
		sealed = sealFile(storage, shared, "w2", started("a", 1, 10, nil))
		arch = "history/search_hot/" + dbfiles.ArchiveName(cluster, mustTime("2026-10-12T00:00:00Z"), mustTime("2026-10-13T00:00:00Z"))
		Expect(os.WriteFile(filepath.Join(shared, arch), []byte("\x1f\x8bgzip"), 0o600)).To(Succeed())
		older := "history/other/" + dbfiles.ArchiveName("other", mustTime("2026-10-11T00:00:00Z"), mustTime("2026-10-12T00:00:00Z"))
		Expect(os.MkdirAll(filepath.Join(shared, "history", "other"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(shared, older), []byte("old"), 0o600)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(shared, "merged"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(shared, "merged", mergedName), []byte("merged bytes"), 0o600)).To(Succeed())
		h = newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1")})
	})

	DescribeTable("serves the three shapes with their content type, as attachments, not cached",
		func(rel func() string, ct string) {
			a := get(h, "/api/v1/debug/download/"+rel())
			Expect(a.Status).To(Equal(200))
			want, err := os.ReadFile(filepath.Join(shared, rel()))
			Expect(err).NotTo(HaveOccurred())
			Expect(a.Body).To(Equal(want))
			Expect(a.Header.Get("Content-Type")).To(Equal(ct))
			Expect(a.Header.Get("Content-Disposition")).To(Equal(`attachment; filename="` + filepath.Base(rel()) + `"`))
			Expect(a.Header.Get("Cache-Control")).To(Equal("no-store, private"))
		},
		Entry("a sealed file", func() string { return sealed }, "application/x-sqlite3"),
		Entry("an archive", func() string { return arch }, "application/gzip"),
		Entry("a merge result", func() string { return "merged/" + mergedName }, "application/x-sqlite3"),
	)

	It("serves only names of the recorder, archive and merge grammars, and no file with a second link", func() {
		secret := filepath.Join(storage, "secret.db")
		Expect(os.WriteFile(secret, []byte("not for download"), 0o600)).To(Succeed())
		planted := []string{
			"history/search_hot/secret.db", // any *.db
			"history/search_hot/w9.db",     // no timestamp
			"history/search_hot/.w9-2026-10-13__08_00_00.db",
			"history/Search Hot/w9-2026-10-13__08_00_00.db", // not a cluster folder name
			"merged/evil.db",
			"history/other/" + dbfiles.ArchiveName("search hot", mustTime("2026-10-11T00:00:00Z"), mustTime("2026-10-12T00:00:00Z")),
		}
		for _, rel := range planted {
			p := filepath.Join(shared, filepath.FromSlash(rel))
			Expect(os.MkdirAll(filepath.Dir(p), 0o700)).To(Succeed())
			Expect(os.WriteFile(p, []byte("planted"), 0o600)).To(Succeed())
		}
		// A hard link with a good name to a file the worker may read.
		linked := "history/search_hot/w9-2026-10-13__08_00_00.db"
		Expect(os.Link(secret, filepath.Join(shared, filepath.FromSlash(linked)))).To(Succeed())
		for _, rel := range append(planted, linked) {
			a := get(h, "/api/v1/debug/download/"+strings.ReplaceAll(rel, " ", "%20"))
			Expect(a.Status).To(Equal(404), rel)
			Expect(string(a.Body)).To(Equal(`{"error":"File not found"}`), rel)
		}
		// The same name with a single link is served.
		Expect(os.Remove(secret)).To(Succeed())
		a := get(h, "/api/v1/debug/download/"+linked)
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal("not for download"))
	})

	It("answers 404 {error} for a missing file", func() {
		a := get(h, "/api/v1/debug/download/history/search_hot/nope.db")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"error":"File not found"}`))
	})

	It("lists the archives of every folder newest first, from names and one stat", func() {
		a := get(h, "/api/v1/debug/archives")
		Expect(a.Status).To(Equal(200))
		list := a.JSON().(map[string]any)["archives"].([]any)
		Expect(list).To(HaveLen(2))
		first := list[0].(map[string]any)
		Expect(first).To(Equal(map[string]any{
			"name": filepath.Base(arch), "cluster": "search_hot", "from_ts": float64(mustTime("2026-10-12T00:00:00Z").Unix()),
			"to_ts": float64(mustTime("2026-10-13T00:00:00Z").Unix()), "size_bytes": float64(6),
			"folder": "history/search_hot", "path": arch,
		}))
		Expect(list[1].(map[string]any)["cluster"]).To(Equal("other"))
	})

	It("serves an archive by its file name from the history folder of the cluster it names", func() {
		for _, rel := range []string{arch, "history/other/" + dbfiles.ArchiveName("other", mustTime("2026-10-11T00:00:00Z"), mustTime("2026-10-12T00:00:00Z"))} {
			a := get(h, "/api/v1/debug/archives/"+filepath.Base(rel))
			Expect(a.Status).To(Equal(200), rel)
			want, err := os.ReadFile(filepath.Join(shared, rel))
			Expect(err).NotTo(HaveOccurred())
			Expect(a.Body).To(Equal(want))
			Expect(a.Header.Get("Content-Type")).To(Equal("application/gzip"))
			Expect(a.Header.Get("Content-Disposition")).To(Equal(`attachment; filename="` + filepath.Base(rel) + `"`))
			Expect(a.Header.Get("Cache-Control")).To(Equal("no-store, private"))
		}
	})

	DescribeTable("answers 404 {error} to an archive name that is not one or names no file",
		func(name string) {
			a := get(h, "/api/v1/debug/archives/"+name)
			Expect(a.Status).To(Equal(404), string(a.Body))
			Expect(string(a.Body)).To(Equal(`{"error":"File not found"}`))
		},
		Entry("a missing window", "search_hot-2026-10-14_00-00__2026-10-15_00-00.db.gz"),
		Entry("a sealed file's name", "w2-2026-01-01__00_00_00.db"),
		Entry("not a name", "x"),
		Entry("an unsanitized cluster", "search%20hot-2026-10-12_00-00__2026-10-13_00-00.db.gz"),
		Entry("a traversal", "..%2F..%2Ftop.db.gz"),
	)

	It("answers no file in memory-only mode", func() {
		m := newAPI(debugapi.Options{Config: apiConfig("", shared, "w1")})
		Expect(get(m, "/api/v1/debug/archives/"+filepath.Base(arch)).Status).To(Equal(404))
		Expect(get(m, "/api/v1/debug/download/"+sealed).Status).To(Equal(404))
		Expect(string(get(m, "/api/v1/debug/archives").Body)).To(Equal(`{"archives":[]}`))
	})
})

var _ = Describe("POST /api/v1/debug/merge", func() {
	var storage, shared string
	var h http.Handler
	var s1, s2 string

	BeforeEach(func() {
		storage, shared = tempDirs()
		s1 = sealFile(storage, shared, "w2", started("a", 1, 10, nil), started("b", 1, 11, nil))
		s2 = sealFile(storage, shared, "w3", started("c", 2, 10, nil))
		h = newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Now: func() time.Time { return mustTime("2026-11-02T03:04:05Z") }})
	})

	It("merges two sealed files into merged/ (0700) and answers the result", func() {
		a := post(h, "/api/v1/debug/merge", `{"filenames":["`+s1+`","`+s2+`"]}`)
		Expect(a.Status).To(Equal(200), string(a.Body))
		body := a.JSON().(map[string]any)
		name := body["filename"].(string)
		Expect(name).To(MatchRegexp(`^merged-2026-11-02__03_04_05-[0-9a-f]{16}\.db$`))
		Expect(body).To(Equal(map[string]any{
			"filename": name, "path": "merged/" + name, "worker_count": float64(2), "event_count": float64(3),
			"state_count": body["state_count"], "cluster_name": cluster, "source_files": []any{s1, s2},
		}))
		fi, err := os.Stat(filepath.Join(shared, "merged"))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		db, err := sql.Open("sqlite", "file:"+filepath.Join(shared, "merged", name)+"?mode=ro")
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var n int
		Expect(db.QueryRow("SELECT count(*) FROM events").Scan(&n)).To(Succeed())
		Expect(n).To(Equal(3))
		ents, _ := os.ReadDir(filepath.Join(shared, "merged"))
		Expect(ents).To(HaveLen(1))

		// A merge result is itself a merge source.
		a = post(h, "/api/v1/debug/merge", `{"filenames":["merged/`+name+`","`+s2+`"]}`)
		Expect(a.Status).To(Equal(200), string(a.Body))
		Expect(a.JSON().(map[string]any)["event_count"]).To(BeNumerically("==", 4))
	})

	DescribeTable("refuses bad requests with the legacy error and writes nothing",
		func(body func() string, status int, want func() string) {
			a := post(h, "/api/v1/debug/merge", body())
			Expect(a.Status).To(Equal(status))
			Expect(string(a.Body)).To(Equal(want()))
			Expect(filepath.Join(shared, "merged")).NotTo(BeADirectory())
		},
		Entry("not JSON", func() string { return `{"filenames":` }, 400, func() string { return `{"error":"Invalid JSON body"}` }),
		Entry("filenames not a list", func() string { return `{"filenames":"a"}` }, 400, func() string { return `{"error":"Invalid JSON body"}` }),
		Entry("one file", func() string { return `{"filenames":["` + s1 + `"]}` }, 400, func() string { return `{"error":"Select at least 2 databases"}` }),
		Entry("no list", func() string { return `{}` }, 400, func() string { return `{"error":"Select at least 2 databases"}` }),
		Entry("an archive", func() string { return `{"filenames":["` + s1 + `","history/search_hot/x.db.gz"]}` }, 400,
			func() string { return `{"error":"Invalid filename: history/search_hot/x.db.gz"}` }),
		Entry("a traversal", func() string { return `{"filenames":["` + s1 + `","history/../../etc.db"]}` }, 400,
			func() string { return `{"error":"Invalid filename: history/../../etc.db"}` }),
		Entry("an own file", func() string { return `{"filenames":["` + s1 + `","w1-x.db"]}` }, 400,
			func() string { return `{"error":"Invalid filename: w1-x.db"}` }),
		Entry("the same file twice", func() string { return `{"filenames":["` + s1 + `","` + s1 + `"]}` }, 400,
			func() string { return `{"error":"Invalid filename: ` + s1 + `"}` }),
		Entry("a missing file", func() string { return `{"filenames":["` + s1 + `","merged/none.db"]}` }, 404,
			func() string { return `{"error":"File not found: merged/none.db"}` }),
	)

	It("answers 403 when ui.merge_enabled is false", func() {
		c := apiConfig(storage, shared, "w1")
		c.MergeEnabled = false
		a := post(newAPI(debugapi.Options{Config: c}), "/api/v1/debug/merge", `{"filenames":["`+s1+`","`+s2+`"]}`)
		Expect(a.Status).To(Equal(403))
		Expect(string(a.Body)).To(Equal(`{"error":"` + debugapi.TextMergeDisabled + `"}`))
	})

	It("refuses a 10 MB body with 400 without merging", func() {
		big := `{"filenames":["` + s1 + `","` + s2 + `"],"pad":"` + strings.Repeat("x", 10<<20) + `"}`
		a := post(h, "/api/v1/debug/merge", big)
		Expect(a.Status).To(Equal(400))
		Expect(string(a.Body)).To(Equal(`{"error":"Invalid JSON body"}`))
		Expect(filepath.Join(shared, "merged")).NotTo(BeADirectory())
	})
})

var _ = Describe("GET /api/v1/debug/download-live", func() {
	It("answers 404 in memory-only mode", func() {
		rec := openRecorder("", "", "w1")
		a := get(newAPI(debugapi.Options{Config: apiConfig("", "", "w1"), Recorder: rec}), "/api/v1/debug/download-live")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"error":"No live database file"}`))
	})

	It("answers a consistent snapshot with a rollback journal and leaves no temp file", func() {
		storage, shared := tempDirs()
		rec := openRecorder(storage, shared, "w1")
		for i := 0; i < 50; i++ {
			rec.Record(started("t", 0, int64(i), nil))
		}
		Expect(rec.Flush(ctx)).To(Succeed())
		before := dirNames(storage)
		a := get(newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec}), "/api/v1/debug/download-live")
		Expect(a.Status).To(Equal(200))
		Expect(a.Header.Get("Content-Type")).To(Equal("application/x-sqlite3"))
		Expect(a.Header.Get("Content-Disposition")).To(Equal(`attachment; filename="` + filepath.Base(rec.LiveFile()) + `"`))
		Expect(a.Header.Get("Cache-Control")).To(Equal("no-store, private"))
		Expect(dirNames(storage)).To(Equal(before))
		Expect(a.Body[18:20]).To(Equal([]byte{1, 1}), "the header says rollback journal")
		p := filepath.Join(GinkgoT().TempDir(), "snap.db")
		Expect(os.WriteFile(p, a.Body, 0o600)).To(Succeed())
		db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var ok string
		Expect(db.QueryRow("PRAGMA integrity_check").Scan(&ok)).To(Succeed())
		Expect(ok).To(Equal("ok"))
		var n int
		Expect(db.QueryRow("SELECT count(*) FROM events").Scan(&n)).To(Succeed())
		Expect(n).To(Equal(50))
	})

	It("takes a consistent snapshot while events are being recorded and flushed", func() {
		storage, shared := tempDirs()
		rec := openRecorder(storage, shared, "w1")
		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
		rec.Record(started("first", 0, 0, nil))
		Expect(rec.Flush(ctx)).To(Succeed())
		done := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			for i := 1; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				rec.Record(started("bg", 0, int64(i), nil))
				Expect(rec.Flush(ctx)).To(Succeed())
			}
		}()
		for range 3 {
			a := get(h, "/api/v1/debug/download-live")
			Expect(a.Status).To(Equal(200))
			p := filepath.Join(GinkgoT().TempDir(), "snap.db")
			Expect(os.WriteFile(p, a.Body, 0o600)).To(Succeed())
			db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
			Expect(err).NotTo(HaveOccurred())
			var ok string
			Expect(db.QueryRow("PRAGMA integrity_check").Scan(&ok)).To(Succeed())
			Expect(ok).To(Equal("ok"))
			var n, maxID int
			Expect(db.QueryRow("SELECT count(*), max(id) FROM events").Scan(&n, &maxID)).To(Succeed())
			Expect(n).To(Equal(maxID), "no hole: the snapshot is one transaction's view")
			Expect(n).To(BeNumerically(">=", 1))
			Expect(db.Close()).To(Succeed())
		}
		close(done)
		<-stopped
	})

	It("answers 500 Snapshot failed when the copy cannot be made", func() {
		storage, shared := tempDirs()
		rec := openRecorder(storage, shared, "w1")
		c := apiConfig(filepath.Join(storage, "missing-folder"), shared, "w1")
		a := get(newAPI(debugapi.Options{Config: c, Recorder: rec}), "/api/v1/debug/download-live")
		Expect(a.Status).To(Equal(500))
		Expect(string(a.Body)).To(HavePrefix(`{"error":"Snapshot failed: `))
	})
})

// dirNames lists a folder's names.
func dirNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// mustTime parses an RFC 3339 time.
func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	Expect(err).NotTo(HaveOccurred())
	return t
}
