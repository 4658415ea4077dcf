// The console's handler over a real store and a real spool folder: its
// files and headers, the schema and owner routes, the failed batches and
// the retry that only --allow-writes opens.

package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults/console"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var eventsKind = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}

// fixture is a store owned by this process, a spool folder of another
// store path holding one failed batch, and the console over both.
type fixture struct {
	st     *records.Store
	dir    *spool.Dir
	failed string // the failed batch's name
}

func newFixture(ctx context.Context) *fixture {
	tmp := GinkgoT().TempDir()
	st, err := records.Open(ctx, filepath.Join(tmp, "data", "records.sqlite"), records.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(st.Close)
	_, err = st.Backend().DeclareKind(ctx, eventsKind)
	Expect(err).NotTo(HaveOccurred())

	dir, err := spool.Open(ctx, filepath.Join(tmp, "other", "records.sqlite"), spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(dir.Close)
	id := spool.NewIdentity("test")
	name, err := dir.Publish(ctx, &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now(),
		Schemas: []recordstore.Kind{eventsKind},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: "events", Rows: []recordstore.Values{{"x"}}}}},
		spool.FormatNDJSON)
	Expect(err).NotTo(HaveOccurred())
	reason := recordstore.Invalidf(`row 1: column "msg": <script>alert(1)</script>`)
	Expect(dir.MoveToFailed(ctx, name.String(), reason)).To(Succeed())
	return &fixture{st: st, dir: dir, failed: name.String()}
}

func (f *fixture) server(allowWrites bool) *httptest.Server {
	h := console.Handler(console.Options{Backend: f.st.Backend(), Status: f.st.Status, Spool: f.dir, AllowWrites: allowWrites})
	srv := httptest.NewServer(h)
	DeferCleanup(srv.Close)
	return srv
}

// call makes a request and returns the response with its body read.
func call(method, url string, header map[string]string) (*http.Response, string) {
	req, err := http.NewRequest(method, url, nil)
	Expect(err).NotTo(HaveOccurred())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp, string(body)
}

func errorCode(body string) string {
	var e struct{ Error struct{ Code string } }
	Expect(json.Unmarshal([]byte(body), &e)).To(Succeed(), body)
	return e.Error.Code
}

var _ = Describe("the console handler", func() {
	var (
		ctx context.Context
		f   *fixture
	)
	BeforeEach(func() {
		ctx = context.Background()
		f = newFixture(ctx)
	})

	DescribeTable("serves its files with their type and the strict security headers",
		func(path, ctype, contains string) {
			srv := f.server(false)
			resp, body := call(http.MethodGet, srv.URL+path, nil)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Content-Type")).To(Equal(ctype))
			Expect(resp.Header.Get("Content-Security-Policy")).To(Equal(console.CSP))
			Expect(resp.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
			Expect(resp.Header.Get("X-Frame-Options")).To(Equal("DENY"))
			Expect(body).To(ContainSubstring(contains))
		},
		Entry("the page", "/console/", "text/html; charset=utf-8", `<script src="/console/app.js" defer></script>`),
		Entry("the script", "/console/app.js", "text/javascript; charset=utf-8", "textContent"),
		Entry("the decoders", "/console/decode.js", "text/javascript; charset=utf-8", "recordsDecode"),
		Entry("the style", "/console/app.css", "text/css; charset=utf-8", "@media"),
	)

	It("allows no inline script or style and no other origin in its policy", func() {
		Expect(console.CSP).To(ContainSubstring("script-src 'self'"))
		Expect(console.CSP).To(ContainSubstring("default-src 'none'"))
		Expect(console.CSP).To(ContainSubstring("frame-ancestors 'none'"))
		Expect(console.CSP).NotTo(ContainSubstring("unsafe-inline"))
		Expect(console.CSP).NotTo(ContainSubstring("unsafe-eval"))
	})

	It("keeps its page free of inline script and inline style", func() {
		srv := f.server(false)
		_, body := call(http.MethodGet, srv.URL+"/console/", nil)
		Expect(strings.Count(body, "<script")).To(Equal(2), "two script elements, the external ones")
		Expect(strings.Count(body, `<script src="/console/`)).To(Equal(2))
		Expect(body).NotTo(ContainSubstring("style="))
		Expect(body).NotTo(ContainSubstring("<style"))
		Expect(body).NotTo(MatchRegexp(`\son[a-z]+=`), "no inline event handler")
	})

	DescribeTable("never writes data as markup in its scripts",
		func(name string) {
			data, err := os.ReadFile(name)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(data)).NotTo(ContainSubstring("innerHTML"))
			Expect(string(data)).NotTo(ContainSubstring("outerHTML"))
			Expect(string(data)).NotTo(ContainSubstring("insertAdjacentHTML"))
			Expect(string(data)).NotTo(ContainSubstring("document.write"))
		},
		Entry("the page's script", "assets/app.js"),
		Entry("the decoders", "assets/decode.js"),
	)

	It("answers a kind's declaration as its schema", func() {
		srv := f.server(false)
		resp, body := call(http.MethodGet, srv.URL+"/console/api/kinds/events", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
		var k recordstore.Kind
		Expect(json.Unmarshal([]byte(body), &k)).To(Succeed())
		Expect(k.Name).To(Equal("events"))
		Expect(k.Columns).To(HaveLen(1))
		Expect(k.Columns[0].Name).To(Equal("msg"))
	})

	DescribeTable("refuses what it cannot answer with the read API's error shape",
		func(method, path string, status int, code string) {
			srv := f.server(false)
			resp, body := call(method, srv.URL+path, nil)
			Expect(resp.StatusCode).To(Equal(status), body)
			Expect(errorCode(body)).To(Equal(code))
			Expect(resp.Header.Get("Content-Security-Policy")).To(Equal(console.CSP))
		},
		Entry("an unknown kind", http.MethodGet, "/console/api/kinds/nope", http.StatusNotFound, "not_found"),
		Entry("a kind name that is no name", http.MethodGet, "/console/api/kinds/a%20b", http.StatusBadRequest, "invalid"),
		Entry("an unknown console path", http.MethodGet, "/console/nothing", http.StatusNotFound, "not_found"),
	)

	It("tells the owner's phase, epoch and heartbeat age, measured by the server", func() {
		srv := f.server(false)
		resp, body := call(http.MethodGet, srv.URL+"/console/api/owner", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
		var o console.Owner
		Expect(json.Unmarshal([]byte(body), &o)).To(Succeed())
		Expect(o.Phase).To(Equal("ready"))
		Expect(o.Role).To(Equal("owner"))
		Expect(o.Epoch).To(BeNumerically(">=", 1))
		Expect(o.HeartbeatAt).NotTo(BeEmpty())
		Expect(o.HeartbeatAgeMS).To(BeNumerically(">=", 0))
		Expect(o.Stale).To(BeFalse())
	})

	It("lists the failed batches with their error.json", func() {
		srv := f.server(false)
		resp, body := call(http.MethodGet, srv.URL+"/console/api/spool", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
		var s console.Spool
		Expect(json.Unmarshal([]byte(body), &s)).To(Succeed())
		Expect(s.AllowWrites).To(BeFalse())
		Expect(s.Failed).To(HaveLen(1))
		Expect(s.Failed[0].Batch).To(Equal(f.failed))
		Expect(s.Failed[0].Failure).NotTo(BeNil())
		Expect(s.Failed[0].Failure.Code).To(Equal("invalid"))
		Expect(s.Failed[0].Failure.Error).To(ContainSubstring("<script>alert(1)</script>"), "the text as it is, escaped by the page only")
	})

	It("refuses a retry with 403 without --allow-writes, and moves nothing", func() {
		srv := f.server(false)
		resp, body := call(http.MethodPost, srv.URL+"/console/api/spool/failed/"+f.failed+"/retry", map[string]string{"X-Records-Console": "1"})
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), body)
		Expect(errorCode(body)).To(Equal("read_only"))
		Expect(f.dir.Path(spool.StateFailed, f.failed)).To(BeADirectory())
		_, err := os.Stat(f.dir.Path(spool.StateIncoming, f.failed))
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	})

	DescribeTable("refuses a retry that does not come from the console's page, and moves nothing",
		func(header map[string]string) {
			srv := f.server(true)
			resp, body := call(http.MethodPost, srv.URL+"/console/api/spool/failed/"+f.failed+"/retry", header)
			Expect(resp.StatusCode).To(Equal(http.StatusForbidden), body)
			Expect(errorCode(body)).To(Equal("invalid"))
			Expect(f.dir.Path(spool.StateFailed, f.failed)).To(BeADirectory())
		},
		Entry("without the console's header", map[string]string{}),
		Entry("from another origin", map[string]string{"X-Records-Console": "1", "Origin": "http://evil.example"}),
	)

	It("moves a failed batch back to incoming/ with --allow-writes", func() {
		srv := f.server(true)
		resp, body := call(http.MethodPost, srv.URL+"/console/api/spool/failed/"+f.failed+"/retry",
			map[string]string{"X-Records-Console": "1", "Origin": srv.URL})
		Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
		Expect(body).To(MatchJSON(`{"batch":"` + f.failed + `","retried":true}`))
		Expect(f.dir.Path(spool.StateIncoming, f.failed)).To(BeADirectory())
		Expect(filepath.Join(f.dir.Path(spool.StateIncoming, f.failed), spool.RetryFile)).To(BeARegularFile())

		resp, body = call(http.MethodPost, srv.URL+"/console/api/spool/failed/"+f.failed+"/retry", map[string]string{"X-Records-Console": "1"})
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound), body)
		Expect(errorCode(body)).To(Equal("not_found"))
	})

	It("refuses a retry of a name that is no batch name", func() {
		srv := f.server(true)
		resp, body := call(http.MethodPost, srv.URL+"/console/api/spool/failed/..%2Fx/retry", map[string]string{"X-Records-Console": "1"})
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), body)
		Expect(errorCode(body)).To(Equal("invalid"))
	})

	It("says there is no spool when the store is open read-only", func() {
		srv := httptest.NewServer(console.Handler(console.Options{Backend: f.st.Backend()}))
		DeferCleanup(srv.Close)
		resp, body := call(http.MethodGet, srv.URL+"/console/api/config", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(body).To(MatchJSON(`{"allowWrites":false,"spool":false}`))
		resp, body = call(http.MethodGet, srv.URL+"/console/api/spool", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound), body)
	})
})
