// GET /metrics of a real query serve: the store's gauges read at scrape
// time, the refused entries and failed batches of other processes counted.

package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches base/metrics and parses the Prometheus text it answers.
func scrape(base string) map[string]*dto.MetricFamily {
	code, ctype, body := get(base + "/metrics")
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), body)
	ExpectWithOffset(1, ctype).To(HavePrefix("text/plain"))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return fams
}

// gaugeOf returns the value of the one gauge of family name.
func gaugeOf(fams map[string]*dto.MetricFamily, name string) float64 {
	f, ok := fams[name]
	ExpectWithOffset(1, ok).To(BeTrue(), "metric %s is served", name)
	ExpectWithOffset(1, f.GetType()).To(Equal(dto.MetricType_GAUGE), name)
	ExpectWithOffset(1, f.GetMetric()).To(HaveLen(1), name)
	return f.GetMetric()[0].GetGauge().GetValue()
}

// rolesOf returns records_owner_role as role label → value.
func rolesOf(fams map[string]*dto.MetricFamily) map[string]float64 {
	f, ok := fams["records_owner_role"]
	ExpectWithOffset(1, ok).To(BeTrue(), "records_owner_role is served")
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		ExpectWithOffset(1, m.GetLabel()).To(HaveLen(1))
		out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	return out
}

// metricOf returns a function that scrapes base and reads gauge name, for
// Eventually.
func metricOf(base, name string) func() float64 {
	return func() float64 { return gaugeOf(scrape(base), name) }
}

var _ = Describe("query serve's /metrics", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
		s.ok(`{"msg":"a"}`+"\n"+`{"msg":"b"}`, "append", "--stream", "e1", "--kind", "events")
	})

	It("reads the store's role, spool, refused entries, damage, epoch and heartbeat at each scrape", func() {
		session, base := startServe(s)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))

		fams := scrape(base)
		Expect(rolesOf(fams)).To(Equal(map[string]float64{"owner": 1, "non-owner": 0, "detached": 0, "read-only": 0}))
		Expect(gaugeOf(fams, "records_spool_backlog_batches")).To(BeZero())
		Expect(gaugeOf(fams, "records_spool_failed_batches")).To(BeZero())
		Expect(gaugeOf(fams, "records_refused_entries")).To(BeZero())
		Expect(gaugeOf(fams, "records_store_corrupt")).To(BeZero())
		Expect(gaugeOf(fams, "records_epoch")).To(Equal(3.0), "two commands owned the store before serve, each one epoch")
		Expect(gaugeOf(fams, "records_heartbeat_age_seconds")).To(BeNumerically(">=", 0))
		Expect(fams).To(HaveKey("go_goroutines"), "the Go collector")
		Expect(fams).To(HaveKey("process_open_fds"), "the process collector")

		By("an entry another process publishes into a sealed stream is refused")
		s.ok("", "seal", "--stream", "e1")
		s.one(msgLines("late", 0, 1), "spool", "publish", "--stream", "e1", "--kind", "events")
		Eventually(metricOf(base, "records_refused_entries")).WithTimeout(liveness).Should(Equal(1.0))
		Expect(gaugeOf(scrape(base), "records_spool_failed_batches")).To(BeZero(), "the batch committed; only its entry was refused")

		By("a batch whose file does not match its manifest goes to failed/")
		other := newStore()
		other.ok("", "kind", "apply", kindsFile())
		name := other.publish()
		file := filepath.Join(spool.PathFor(other.path), "incoming", name, "e00001.ndjson")
		good, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(file, append(bytes.Clone(good), '\n'), 0o600)).To(Succeed())
		Expect(os.Rename(filepath.Dir(file), filepath.Join(spool.PathFor(s.path), "incoming", name))).To(Succeed())
		s.ok(`{"msg":"c"}`, "append", "--stream", "e2", "--kind", "events") // wakes the owner's drain at the latest
		Eventually(metricOf(base, "records_spool_failed_batches")).WithTimeout(liveness).Should(Equal(1.0))
		Expect(s.entries(spool.StateFailed)).To(ConsistOf(name))
		fams = scrape(base)
		Expect(gaugeOf(fams, "records_spool_backlog_batches")).To(BeZero())
		Expect(gaugeOf(fams, "records_refused_entries")).To(Equal(1.0))
	})

	It("answers another method than GET or HEAD with 405 and code unsupported, as the API does", func() {
		_, base := startServe(s)
		resp, err := client.Post(base+"/metrics", "text/plain", strings.NewReader(""))
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
		Expect(resp.Header.Get("Allow")).To(Equal("GET, HEAD"))
		var body map[string]map[string]string
		Expect(json.NewDecoder(resp.Body).Decode(&body)).To(Succeed())
		Expect(body["error"]).To(HaveKeyWithValue("code", "unsupported"))

		head, err := client.Head(base + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		Expect(head.Body.Close()).To(Succeed())
		Expect(head.StatusCode).To(Equal(http.StatusOK))
	})

	It("reads a standing-by serve's role as non-owner, and the owner's counts through it", func() {
		owning, _ := startServe(s)
		Eventually(logOf(owning)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		standing, base := startServe(s)
		Eventually(logOf(standing)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=non-owner"))
		s.ok("", "seal", "--stream", "e1")
		s.one(msgLines("late", 0, 1), "spool", "publish", "--stream", "e1", "--kind", "events")
		Eventually(metricOf(base, "records_refused_entries")).WithTimeout(liveness).Should(Equal(1.0))

		fams := scrape(base)
		Expect(rolesOf(fams)).To(Equal(map[string]float64{"owner": 0, "non-owner": 1, "detached": 0, "read-only": 0}))
		Expect(gaugeOf(fams, "records_epoch")).To(Equal(3.0), "the owner's epoch")
		Expect(gaugeOf(fams, "records_store_corrupt")).To(BeZero())
	})
})
