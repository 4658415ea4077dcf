// The request metrics and the /metrics route through a real HTTP server:
// labels by route pattern and status code, "other" for the rest, the
// follow gauge while a response streams, and the 405 of another method.

package ownermetrics_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fb46ecde/records/recordstore/ownermetrics"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
)

// gaugeValue returns the value of the unlabelled gauge name.
func gaugeValue(reg *prometheus.Registry, name string) float64 {
	f, ok := gathered(reg)[name]
	ExpectWithOffset(1, ok).To(BeTrue(), "family %s is registered", name)
	return f.GetMetric()[0].GetGauge().GetValue()
}

// discardLog is a logger that writes nothing.
func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fetch sends method to url and returns the status and body.
func fetch(method, url string) (int, http.Header, string) {
	req, err := http.NewRequest(method, url, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return resp.StatusCode, resp.Header, string(body)
}

var _ = Describe("the request metrics", func() {
	var (
		reg     *prometheus.Registry
		srv     *httptest.Server
		release chan struct{}
	)

	BeforeEach(func() {
		reg = prometheus.NewRegistry()
		hm, err := ownermetrics.NewHTTP(reg, ownermetrics.HTTPOptions{
			Routes: []string{"/items/{id}", "/items/{id}/follow", ownermetrics.MetricsPath},
			Follow: "/items/{id}/follow",
		})
		Expect(err).NotTo(HaveOccurred())
		release = make(chan struct{})
		api := http.NewServeMux()
		api.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("id") == "missing" {
				http.Error(w, "no such item", http.StatusNotFound)
				return
			}
			_, _ = io.WriteString(w, "item\n") // no WriteHeader: 200
		})
		api.HandleFunc("GET /items/{id}/follow", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "started\n")
			_ = http.NewResponseController(w).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		srv = httptest.NewServer(hm.Wrap(ownermetrics.Mount(api, ownermetrics.Handler(reg, discardLog()))))
		DeferCleanup(srv.Close)
		DeferCleanup(func() { close(release) })
	})

	It("counts requests by route pattern and code, and any other path as route other", func() {
		for _, p := range []string{"/items/a", "/items/b", "/items/missing", "/nowhere", "/items/a/b/c"} {
			fetch(http.MethodGet, srv.URL+p)
		}
		Expect(value(reg, "records_http_requests_total", "route", "/items/{id}", "code", "200")).To(Equal(2.0))
		Expect(value(reg, "records_http_requests_total", "route", "/items/{id}", "code", "404")).To(Equal(1.0))
		Expect(value(reg, "records_http_requests_total", "route", "other", "code", "404")).To(Equal(2.0))
		_, _, body := fetch(http.MethodGet, srv.URL+"/metrics")
		Expect(body).To(ContainSubstring(`records_http_requests_total{code="200",route="/items/{id}"} 2`))
	})

	It("counts a follow response as open while it streams, through the flushes", func() {
		resp, err := http.Get(srv.URL + "/items/a/follow")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("started\n"), "the flush went through the counting writer")
		Expect(gaugeValue(reg, "records_follow_clients")).To(Equal(1.0))
		release <- struct{}{}
		_, _ = io.Copy(io.Discard, resp.Body)
		// Counted before the response ended: the handler's return ends it.
		Expect(gaugeValue(reg, "records_follow_clients")).To(BeZero())
		Expect(value(reg, "records_http_requests_total", "route", "/items/{id}/follow", "code", "200")).To(Equal(1.0))
	})

	It("answers another method than GET or HEAD on /metrics with 405 and code unsupported", func() {
		status, h, body := fetch(http.MethodPost, srv.URL+"/metrics")
		Expect(status).To(Equal(http.StatusMethodNotAllowed))
		Expect(h.Get("Allow")).To(Equal("GET, HEAD"))
		Expect(h.Get("Content-Type")).To(Equal("application/json"))
		Expect(strings.TrimSpace(body)).To(Equal(`{"error":{"code":"unsupported","message":"method POST is not allowed on /metrics: GET or HEAD"}}`))
		Expect(value(reg, "records_http_requests_total", "route", "/metrics", "code", "405")).To(Equal(1.0))
	})

	It("refuses conflicting route patterns, registering nothing", func() {
		other := prometheus.NewRegistry()
		_, err := ownermetrics.NewHTTP(other, ownermetrics.HTTPOptions{Routes: []string{"/a/{x}", "/a/{y}"}})
		Expect(err).To(MatchError(ContainSubstring(`route pattern "/a/{y}"`)))
		fams, err := other.Gather()
		Expect(err).NotTo(HaveOccurred())
		Expect(fams).To(BeEmpty())
	})
})
