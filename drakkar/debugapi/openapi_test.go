// The contract test of the worker's API: a real worker (its real HTTP
// server on 127.0.0.1) answers every route of openapi.yaml with valid and
// invalid input, and each answer's status, headers and body are validated
// against the document the worker serves at /api/v1/openapi.json. A second
// spec fails when the routes New serves and the document's paths differ.

package debugapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"go.yaml.in/yaml/v3"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/worker"
)

// docOperations is "METHOD path" of every operation of openapi.yaml.
func docOperations() []string {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	Expect(yaml.Unmarshal(debugapi.OpenAPIYAML, &doc)).To(Succeed())
	var out []string
	for p, ops := range doc.Paths {
		for m := range ops {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(out)
	return out
}

var _ = Describe("the OpenAPI document", func() {
	It("lists exactly the routes New serves", func() {
		var served []string
		for _, rt := range debugapi.Routes(newAPI(debugapi.Options{})) {
			served = append(served, rt.Method+" "+rt.Path)
		}
		sort.Strings(served)
		Expect(served).To(Equal(docOperations()))
	})

	It("marks every operation with its origin", func() {
		var doc struct {
			Paths map[string]map[string]struct {
				Origin string `yaml:"x-drakkar-origin"`
			} `yaml:"paths"`
		}
		Expect(yaml.Unmarshal(debugapi.OpenAPIYAML, &doc)).To(Succeed())
		for p, ops := range doc.Paths {
			for m, op := range ops {
				Expect(op.Origin).To(BeElementOf("contract", "spec", "extension"), m+" "+p)
			}
		}
	})
})

// contractCase is one request of the contract test.
type contractCase struct {
	// op is the document's "METHOD path" the request exercises.
	op     string
	method string
	// target is the request's path and query on the worker.
	target string
	// docTarget, when set, is the target the validator sees: a path
	// parameter holding slashes is one segment there.
	docTarget string
	body      string
	status    int
	// valid requests are also validated against the document.
	valid bool
	// check, when set, looks at the decoded JSON body.
	check func(body any, h http.Header)
}

var _ = Describe("the worker's API against its OpenAPI document", Ordered, func() {
	var w *worker.Worker
	var base, shared, sealed1, sealed2, archName string
	var v validator.Validator

	BeforeAll(func() {
		ctx := context.Background()
		dir := GinkgoT().TempDir()
		storage := filepath.Join(dir, "storage")
		shared = filepath.Join(dir, "shared")
		Expect(os.MkdirAll(shared, 0o700)).To(Succeed())
		sealed1 = sealFile(filepath.Join(dir, "s2"), shared, "w2", started("old", 3, 42, map[string]string{"tenant": "acme"}))
		sealed2 = sealFile(filepath.Join(dir, "s3"), shared, "w3", started("older", 3, 42, nil))
		archName = dbfiles.ArchiveName(cluster, mustTime("2026-10-12T00:00:00Z"), mustTime("2026-10-13T00:00:00Z"))
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, err := zw.Write([]byte("an archive's bytes"))
		Expect(err).NotTo(HaveOccurred())
		Expect(zw.Close()).To(Succeed())
		Expect(os.WriteFile(filepath.Join(shared, "history", "search_hot", archName), gz.Bytes(), 0o600)).To(Succeed())

		cfg, err := worker.Load(worker.LoadOptions{Sets: []string{"worker.name=w1", "cluster.name=" + cluster,
			"storage.dir=" + storage, "shared.dir=" + shared, "ui.addr=127.0.0.1:0", "cache.enabled=true"}})
		Expect(err).NotTo(HaveOccurred())
		w, err = worker.Open(ctx, cfg, worker.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = w.Close(context.Background()) })
		base = w.URL()
		Expect(base).To(HavePrefix("http://127.0.0.1:"))
		w.Record(started("live", 3, 42, map[string]string{"tenant": "acme", "zone": "eu"}))
		Expect(w.Recorder().Flush(ctx)).To(Succeed())
		Expect(w.Cache().Set(ctx, "a/b:c", `{"v":1}`, cache.ScopeCluster, 0)).To(Succeed())
		Expect(w.Cache().Flush(ctx)).To(Succeed())
		Eventually(func() int { code, _, _ := call(base, "GET", "/readyz", ""); return code }).
			WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(200))

		code, _, doc := call(base, "GET", "/api/v1/openapi.json", "")
		Expect(code).To(Equal(200))
		d, err := libopenapi.NewDocument(doc)
		Expect(err).NotTo(HaveOccurred())
		var errs []error
		v, errs = validator.NewValidator(d)
		Expect(errs).To(BeEmpty())
		ok, verrs := v.ValidateDocument()
		Expect(ok).To(BeTrue(), fmt.Sprint(verrs))
	})

	It("has a validator that refuses answers the document does not allow", func() {
		bad := func(target string, status int, hdr http.Header, body string) []string {
			req, err := http.NewRequest("GET", base+target, nil)
			Expect(err).NotTo(HaveOccurred())
			h := http.Header{"Content-Type": {"application/json"}}
			for k, v := range hdr {
				h[k] = v
			}
			resp := &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}
			ok, errs := v.ValidateHttpResponse(req, resp)
			Expect(ok).To(BeFalse(), target+" "+body)
			var out []string
			for _, e := range errs {
				out = append(out, e.Message)
			}
			return out
		}
		traceHdr := http.Header{"X-Drakkar-Trace-Files-Searched": {"1"}, "X-Drakkar-Trace-Truncated": {"false"}}
		bad("/api/v1/debug/trace?partition=1&offset=1", 200, traceHdr, `{"events":[],"files_searched":0,"truncated":false}`)
		bad("/api/v1/debug/trace?partition=1&offset=1", 200, nil, `[]`)
		bad("/api/v1/debug/label-keys", 200, nil, `{"keys":[]}`)
		bad("/api/v1/debug/cache/stats", 200, nil, `{"entries":1,"size_bytes":2}`)
		bad("/api/v1/events", 418, nil, `[]`)
		bad("/api/v1/events", 422, nil, `{"detail":"x"}`)
	})

	It("answers every route of the document, valid and invalid input, as the document says", func() {
		rows := func(n int) func(any, http.Header) {
			return func(b any, _ http.Header) { Expect(b).To(HaveLen(n)) }
		}
		cases := []contractCase{
			{op: "GET /healthz", target: "/healthz", status: 200, valid: true},
			{op: "GET /readyz", target: "/readyz", status: 200, valid: true},
			{op: "GET /metrics", target: "/metrics", status: 200, valid: true},
			{op: "GET /api/v1/identity", target: "/api/v1/identity", status: 200, valid: true, check: func(b any, _ http.Header) {
				Expect(b).To(And(HaveKeyWithValue("backend", "go"), HaveKeyWithValue("backend_version", "dev"),
					HaveKeyWithValue("worker_id", "w1"), HaveKeyWithValue("cluster", cluster)))
			}},
			{op: "GET /api/v1/openapi.json", target: "/api/v1/openapi.json", status: 200, valid: true},
			{op: "GET /api/v1/workers", target: "/api/v1/workers", status: 200, valid: true},
			{op: "GET /api/v1/events", target: "/api/v1/events", status: 200, valid: true, check: rows(1)},
			{op: "GET /api/v1/events", target: "/api/v1/events?limit=0", status: 200, valid: true, check: rows(0)},
			{op: "GET /api/v1/events", target: "/api/v1/events?limit=5&partitions=3,4&event_types=task_started", status: 200, valid: true, check: rows(1)},
			{op: "GET /api/v1/events", target: "/api/v1/events?limit=10001", status: 422},
			{op: "GET /api/v1/events", target: "/api/v1/events?limit=-1", status: 422},
			{op: "GET /api/v1/events", target: "/api/v1/events?partitions=1,a", status: 422},
			{op: "GET /api/v1/debug/databases", target: "/api/v1/debug/databases", status: 200, valid: true},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/" + sealed1, docTarget: "/api/v1/debug/download/sealed", status: 200, valid: true},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/history/search_hot/" + archName, docTarget: "/api/v1/debug/download/archive", status: 200, valid: true},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/history/search_hot/none.db", docTarget: "/api/v1/debug/download/none", status: 404},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/history/search_hot/a%22b.db", docTarget: "/api/v1/debug/download/quote", status: 400},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/history/search_hot/a;b.db", docTarget: "/api/v1/debug/download/semicolon", status: 400},
			{op: "GET /api/v1/debug/download/{path}", target: "/api/v1/debug/download/history/search_hot/a%01b.db", docTarget: "/api/v1/debug/download/control", status: 400},
			{op: "GET /api/v1/debug/download-live", target: "/api/v1/debug/download-live", status: 200, valid: true},
			{op: "POST /api/v1/debug/merge", method: "POST", target: "/api/v1/debug/merge", body: `{"filenames":["` + sealed1 + `","` + sealed2 + `"]}`, status: 200, valid: true,
				check: func(b any, _ http.Header) { Expect(b).To(HaveKeyWithValue("source_files", HaveLen(2))) }},
			{op: "POST /api/v1/debug/merge", method: "POST", target: "/api/v1/debug/merge", body: `{"filenames":`, status: 400},
			{op: "POST /api/v1/debug/merge", method: "POST", target: "/api/v1/debug/merge", body: `{"filenames":["` + sealed1 + `"]}`, status: 400},
			{op: "POST /api/v1/debug/merge", method: "POST", target: "/api/v1/debug/merge", body: `{"filenames":["` + sealed1 + `","history/search_hot/a;b.db"]}`, status: 400},
			{op: "POST /api/v1/debug/merge", method: "POST", target: "/api/v1/debug/merge", body: `{"filenames":["` + sealed1 + `","merged/none.db"]}`, status: 404},
			{op: "GET /api/v1/debug/archives", target: "/api/v1/debug/archives", status: 200, valid: true, check: func(b any, _ http.Header) {
				Expect(b).To(HaveKeyWithValue("archives", HaveLen(1)))
			}},
			{op: "GET /api/v1/debug/archives/{name}", target: "/api/v1/debug/archives/" + archName, status: 200, valid: true},
			{op: "GET /api/v1/debug/archives/{name}", target: "/api/v1/debug/archives/search_hot-2026-10-14_00-00__2026-10-15_00-00.db.gz", status: 404},
			{op: "GET /api/v1/debug/archives/{name}", target: "/api/v1/debug/archives/not-an-archive.db", status: 404},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=3&offset=42", status: 200, valid: true, check: func(b any, h http.Header) {
				Expect(b).To(HaveLen(1))
				Expect(h.Get("X-Drakkar-Trace-Truncated")).To(Equal("false"))
			}},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=3&offset=42&history=true", status: 200, valid: true, check: rows(2)},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=2147483648&offset=1", status: 422},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=1", status: 422},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=1&offset=x", status: 422},
			{op: "GET /api/v1/debug/trace", target: "/api/v1/debug/trace?partition=1&offset=1&history=maybe", status: 422},
			{op: "GET /api/v1/debug/trace-by-label", target: "/api/v1/debug/trace-by-label?key=tenant&value=acme", status: 200, valid: true, check: rows(1)},
			{op: "GET /api/v1/debug/trace-by-label", target: "/api/v1/debug/trace-by-label?key=&value=acme", status: 422},
			{op: "GET /api/v1/debug/trace-by-label", target: "/api/v1/debug/trace-by-label?key=tenant", status: 422},
			{op: "GET /api/v1/debug/label-keys", target: "/api/v1/debug/label-keys", status: 200, valid: true, check: func(b any, _ http.Header) {
				Expect(b).To(Equal([]any{"tenant", "zone"}))
			}},
			{op: "GET /api/v1/debug/metrics", target: "/api/v1/debug/metrics", status: 200, valid: true, check: func(b any, _ http.Header) {
				Expect(b).NotTo(BeEmpty())
			}},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries", status: 200, valid: true},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries?limit=0&offset=0&scope=cluster&search=a&expired_only=false", status: 200, valid: true,
				check: func(b any, _ http.Header) {
					Expect(b).To(And(HaveKeyWithValue("entries", BeEmpty()), HaveKeyWithValue("total", 1.0)))
				}},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries?limit=1001", status: 422},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries?limit=ten", status: 422},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries?offset=-1", status: 422},
			{op: "GET /api/v1/debug/cache/entries", target: "/api/v1/debug/cache/entries?expired_only=maybe", status: 422},
			{op: "GET /api/v1/debug/cache/entry/{key}", target: "/api/v1/debug/cache/entry/a/b:c", docTarget: "/api/v1/debug/cache/entry/key", status: 200, valid: true,
				check: func(b any, _ http.Header) {
					Expect(b).To(And(HaveKeyWithValue("value", map[string]any{"v": 1.0}), HaveKeyWithValue("raw_value", `{"v":1}`)))
				}},
			{op: "GET /api/v1/debug/cache/entry/{key}", target: "/api/v1/debug/cache/entry/none", status: 404},
			{op: "GET /api/v1/debug/cache/stats", target: "/api/v1/debug/cache/stats", status: 200, valid: true},
			{op: "GET /api/v1/debug/status", target: "/api/v1/debug/status", status: 200, valid: true, check: func(b any, _ http.Header) {
				Expect(b).To(HaveKeyWithValue("worker", "w1"))
				Expect(b).To(HaveKeyWithValue("recorder", HaveKeyWithValue("backlog", BeEmpty())))
				Expect(b).To(HaveKeyWithValue("recorder", HaveKeyWithValue("next_rotation", Not(BeNil()))))
				Expect(b).To(HaveKeyWithValue("archive", HaveKeyWithValue("folder", filepath.Join(shared, "history", "search_hot"))))
				Expect(b).To(HaveKeyWithValue("peers", BeEmpty()))
			}},
			{op: "GET /api/v1/peer/cache/changes", target: "/api/v1/peer/cache/changes?scopes=cluster", status: 200, valid: true},
			{op: "GET /api/v1/peer/cache/changes", target: "/api/v1/peer/cache/changes", status: 400},
			{op: "GET /api/v1/peer/cache/changes", target: "/api/v1/peer/cache/changes?scopes=cluster&limit=0", status: 400},
		}
		called := map[string]bool{}
		for _, c := range cases {
			method := c.method
			if method == "" {
				method = "GET"
			}
			desc := method + " " + c.target
			code, resp, body := call(base, method, c.target, c.body)
			Expect(code).To(Equal(c.status), desc+": "+string(body))
			called[c.op] = true

			docTarget := c.docTarget
			if docTarget == "" {
				docTarget = c.target
			}
			var reqBody io.Reader
			if c.body != "" {
				reqBody = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(method, base+docTarget, reqBody)
			Expect(err).NotTo(HaveOccurred())
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if c.valid {
				ok, errs := v.ValidateHttpRequest(req)
				Expect(ok).To(BeTrue(), desc+": request: "+fmt.Sprint(errs))
				req, _ = http.NewRequest(method, base+docTarget, strings.NewReader(c.body))
				if c.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			ok, errs := v.ValidateHttpResponse(req, resp)
			Expect(ok).To(BeTrue(), desc+": response "+string(body)+": "+fmt.Sprint(errs))
			if c.check != nil {
				var b any
				Expect(json.Unmarshal(body, &b)).To(Succeed(), desc)
				c.check(b, resp.Header)
			}
		}
		var missed []string
		for _, op := range docOperations() {
			if !called[op] {
				missed = append(missed, op)
			}
		}
		Expect(missed).To(BeEmpty(), "operations of the document no case calls")
	})
})

// call sends one request to the worker at base and reads the whole answer.
func call(base, method, target, body string) (int, *http.Response, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+target, rd)
	Expect(err).NotTo(HaveOccurred())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, resp, b
}
