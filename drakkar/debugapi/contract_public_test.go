// Specs of the routes the public Drakkar API contract adds: the identity
// card, the metric families as JSON, this API's OpenAPI document, and the
// contract's pipeline routes this worker does not serve.

package debugapi_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/debugapi"
)

var _ = Describe("GET /api/v1/identity", func() {
	It("answers the identity card: backend go, the build stamp (dev in a test binary), the worker and cluster", func() {
		c := apiConfig("/s", "/sh", "w1")
		a := get(newAPI(debugapi.Options{Config: c}), "/api/v1/identity")
		Expect(a.Status).To(Equal(200))
		Expect(a.Header.Get("Content-Type")).To(Equal("application/json"))
		Expect(string(a.Body)).To(Equal(`{"worker_id":"w1","cluster":"search hot",` +
			`"config_summary":"worker=w1 cluster=search hot storage.dir=/s shared.dir=/sh merge=on auth=off",` +
			`"backend":"go","backend_version":"dev","ui_version":null,"ui_source":"builtin","link_bases":{},"custom_renderers":false,` +
			`"timeline":{"history_factor":100,"max_age_minutes":10,"color_rules":[],"labels":{}}}`))
	})

	It("has a null cluster when cluster.name is empty", func() {
		c := apiConfig("", "", "w1")
		c.ClusterName = ""
		a := get(newAPI(debugapi.Options{Config: c}), "/api/v1/identity")
		Expect(a.JSON()).To(HaveKeyWithValue("cluster", BeNil()))
		Expect(a.JSON()).To(HaveKeyWithValue("config_summary", "worker=w1 cluster= storage=memory-only merge=on auth=off"))
	})
})

var _ = Describe("GET /api/v1/debug/metrics", func() {
	It("answers the families of the gatherer /metrics serves, as JSON", func() {
		reg := prometheus.NewRegistry()
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drakkar_x_total", Help: "x help"}, []string{"k"})
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "drakkar_g", Help: "g help"})
		hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drakkar_h_seconds", Help: "h help", Buckets: []float64{0.5, 1}})
		u := prometheus.NewUntypedFunc(prometheus.UntypedOpts{Name: "drakkar_u", Help: "u help"}, func() float64 { return 7 })
		reg.MustRegister(c, g, hist, u)
		c.WithLabelValues("a").Add(3)
		g.Set(-2.5)
		hist.Observe(0.7)
		h := newAPI(debugapi.Options{Metrics: reg})
		a := get(h, "/api/v1/debug/metrics")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`[` +
			`{"name":"drakkar_g","type":"gauge","help":"g help","source":"framework","samples":[{"name":"drakkar_g","labels":{},"value":-2.5}]},` +
			`{"name":"drakkar_h_seconds","type":"histogram","help":"h help","source":"framework","samples":[` +
			`{"name":"drakkar_h_seconds_bucket","labels":{"le":"0.5"},"value":0},` +
			`{"name":"drakkar_h_seconds_bucket","labels":{"le":"1"},"value":1},` +
			`{"name":"drakkar_h_seconds_bucket","labels":{"le":"+Inf"},"value":1},` +
			`{"name":"drakkar_h_seconds_sum","labels":{},"value":0.7},` +
			`{"name":"drakkar_h_seconds_count","labels":{},"value":1}]},` +
			`{"name":"drakkar_u","type":"unknown","help":"u help","source":"framework","samples":[{"name":"drakkar_u","labels":{},"value":7}]},` +
			`{"name":"drakkar_x_total","type":"counter","help":"x help","source":"framework","samples":[{"name":"drakkar_x_total","labels":{"k":"a"},"value":3}]}]`))
		text := string(get(h, "/metrics").Body)
		Expect(text).To(ContainSubstring(`drakkar_x_total{k="a"} 3`))
		Expect(text).To(ContainSubstring(`drakkar_h_seconds_bucket{le="+Inf"} 1`))
	})

	It("answers [] without a gatherer", func() {
		a := get(newAPI(debugapi.Options{}), "/api/v1/debug/metrics")
		Expect(a.Status).To(Equal(200))
		Expect(string(a.Body)).To(Equal(`[]`))
	})
})

var _ = Describe("GET /api/v1/openapi.json", func() {
	It("serves the OpenAPI 3.1 document of this API, behind the token", func() {
		c := debugapi.DefaultConfig()
		c.AuthToken = "s3cret"
		h := newAPI(debugapi.Options{Config: c})
		Expect(get(h, "/api/v1/openapi.json").Status).To(Equal(401))
		a := get(h, "/api/v1/openapi.json", "Authorization", "Bearer s3cret")
		Expect(a.Status).To(Equal(200))
		Expect(a.Header.Get("Content-Type")).To(Equal("application/json"))
		doc := a.JSON().(map[string]any)
		Expect(doc).To(HaveKeyWithValue("openapi", "3.1.0"))
		Expect(doc["paths"]).To(HaveKey("/api/v1/debug/trace"))
	})
})

var _ = Describe("the contract's pipeline routes", func() {
	DescribeTable("answer 404 {detail: Not Found}: this worker runs no Kafka pipeline",
		func(method, target string) {
			var body *strings.Reader
			if method == http.MethodPost {
				body = strings.NewReader(`{}`)
			} else {
				body = strings.NewReader("")
			}
			a := do(newAPI(debugapi.Options{}), method, target, body)
			Expect(a.Status).To(Equal(404))
			Expect(string(a.Body)).To(Equal(`{"detail":"Not Found"}`))
		},
		Entry(nil, "GET", "/api/v1/dashboard"),
		Entry(nil, "GET", "/api/v1/partitions"),
		Entry(nil, "GET", "/api/v1/task/t1"),
		Entry(nil, "GET", "/api/v1/sinks"),
		Entry(nil, "GET", "/api/v1/recent-tasks"),
		Entry(nil, "GET", "/api/v1/live/overview"),
		Entry(nil, "POST", "/api/v1/live/arrange-tasks"),
		Entry(nil, "GET", "/api/v1/live/task-results"),
		Entry(nil, "GET", "/api/v1/live/message-results"),
		Entry(nil, "GET", "/api/v1/live/window-results"),
		Entry(nil, "POST", "/api/v1/live/sink-breakdown"),
		Entry(nil, "GET", "/api/v1/runtime/health"),
		Entry(nil, "GET", "/api/v1/debug/processors"),
		Entry(nil, "GET", "/api/v1/debug/periodic"),
		Entry(nil, "GET", "/api/v1/debug/runtime/units"),
		Entry(nil, "POST", "/api/v1/debug/probe"),
		Entry(nil, "GET", "/api/v1/debug/consume-pause"),
		Entry(nil, "POST", "/api/v1/debug/consume-pause"),
		Entry(nil, "POST", "/api/v1/debug/consume-resume"),
		Entry(nil, "GET", "/api/v1/debug/kafka/topics"),
		Entry(nil, "GET", "/api/v1/debug/kafka/source/message"),
		Entry(nil, "GET", "/api/v1/debug/kafka/source/messages"),
		Entry(nil, "GET", "/api/v1/config-reference"),
		Entry(nil, "GET", "/api/v1/pages"),
		Entry(nil, "GET", "/api/v1/ui/renderers.js"),
	)
})
