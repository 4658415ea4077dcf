// GET /metrics of a real query serve after real work: other processes'
// batches ingested and failed, a wait for a batch, HTTP requests by route
// and code, follow clients, and a standing-by serve's promotion.

package main_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
)

// sampleOf returns the value of the counter or gauge (or the sample count
// of the histogram) of family name whose labels include labels (name,
// value pairs); -1 when the family has no such metric.
func sampleOf(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		switch {
		case !match:
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		default:
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// sampled returns a function that scrapes base and reads sampleOf, for
// Eventually.
func sampled(base, name string, labels ...string) func() float64 {
	return func() float64 { return sampleOf(scrape(base), name, labels...) }
}

var _ = Describe("query serve's /metrics after real work", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
	})

	It("counts other processes' batches ingested and failed, its waits, its requests by route and code, and its follow clients", func() {
		session, base := startServe(s)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		fams := scrape(base)
		Expect(sampleOf(fams, "records_batches_ingested_total")).To(BeZero())
		Expect(sampleOf(fams, "records_appends_total", "role", "owner")).To(BeZero(), "serve appends nothing itself")

		By("another process appends three rows through the spool")
		s.ok(msgLines("m", 0, 3), "append", "--stream", "e1", "--kind", "events")
		Eventually(sampled(base, "records_ingested_rows_total")).WithTimeout(liveness).Should(Equal(3.0))
		fams = scrape(base)
		Expect(sampleOf(fams, "records_batches_ingested_total")).To(BeNumerically(">=", 1))
		Expect(sampleOf(fams, "records_ingest_latency_seconds")).To(Equal(sampleOf(fams, "records_batches_ingested_total")))
		Expect(sampleOf(fams, "records_group_commit_batches")).To(BeNumerically(">=", 1))

		By("a wait for a batch through the API")
		name := s.publish()
		code, _, body := get(base + "/api/v1/batches/" + name + "?wait=30s")
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(sampleOf(scrape(base), "records_await_latency_seconds", "outcome", "answered")).To(Equal(1.0))

		By("a batch whose file does not match its manifest fails")
		other := newStore()
		other.ok("", "kind", "apply", kindsFile())
		bad := other.publish()
		file := filepath.Join(spool.PathFor(other.path), "incoming", bad, "e00001.ndjson")
		good, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(file, append(bytes.Clone(good), '\n'), 0o600)).To(Succeed())
		Expect(os.Rename(filepath.Dir(file), filepath.Join(spool.PathFor(s.path), "incoming", bad))).To(Succeed())
		s.ok(`{"msg":"c"}`, "append", "--stream", "e2", "--kind", "events") // wakes the owner's drain at the latest
		Eventually(sampled(base, "records_batches_failed_total")).WithTimeout(liveness).Should(Equal(1.0))

		By("requests, by route pattern and status code")
		code, _, _ = get(base + "/api/v1/streams/e1/rows")
		Expect(code).To(Equal(http.StatusOK))
		code, _, _ = get(base + "/api/v1/streams/nope/rows")
		Expect(code).To(Equal(http.StatusNotFound))
		code, _, _ = get(base + "/no/such/path/" + name)
		Expect(code).To(Equal(http.StatusNotFound))
		code, _, _ = get(base + "/console/")
		Expect(code).To(Equal(http.StatusOK))
		fams = scrape(base)
		Expect(sampleOf(fams, "records_http_requests_total", "route", "/api/v1/streams/{stream}/rows", "code", "200")).To(Equal(1.0))
		Expect(sampleOf(fams, "records_http_requests_total", "route", "/api/v1/streams/{stream}/rows", "code", "404")).To(Equal(1.0))
		Expect(sampleOf(fams, "records_http_requests_total", "route", "other", "code", "404")).To(Equal(1.0))
		Expect(sampleOf(fams, "records_http_requests_total", "route", "/console/{$}", "code", "200")).To(Equal(1.0))
		for _, m := range fams["records_http_requests_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					Expect(l.GetValue()).NotTo(ContainSubstring(name), "no path in a label")
				}
			}
		}

		By("a follow client, while its response is open")
		Expect(sampleOf(scrape(base), "records_follow_clients")).To(BeZero())
		resp, err := client.Get(base + "/api/v1/streams/e1/follow?after=3")
		Expect(err).NotTo(HaveOccurred())
		Eventually(sampled(base, "records_follow_clients")).Should(Equal(1.0))
		Expect(resp.Body.Close()).To(Succeed())
		Eventually(sampled(base, "records_follow_clients")).WithTimeout(liveness).Should(BeZero())
		Eventually(sampled(base, "records_http_requests_total", "route", "/api/v1/streams/{stream}/follow", "code", "200")).Should(Equal(1.0))
	})

	It("counts the promotion of a standing-by serve whose owner went away", func() {
		owning, _ := startServe(s)
		Eventually(logOf(owning)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		standing, base := startServe(s)
		Eventually(logOf(standing)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=non-owner"))
		Expect(sampleOf(scrape(base), "records_promotions_total")).To(BeZero())
		owning.Kill().Wait(10 * time.Second)
		Eventually(logOf(standing)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		Expect(sampleOf(scrape(base), "records_promotions_total")).To(Equal(1.0))
	})
})
