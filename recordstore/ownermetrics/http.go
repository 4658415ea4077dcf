// Request metrics of an HTTP server (requests by route pattern and status
// code, follow responses open), the /metrics route, and mounting it beside
// an API.

package ownermetrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/httpx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RouteOther is the route label of a request no pattern matches.
const RouteOther = "other"

// MetricsPath is the path Mount serves the metrics at.
const MetricsPath = "/metrics"

// HTTPOptions configure NewHTTP.
type HTTPOptions struct {
	// Routes are the values of the route label: the routes the server
	// answers, as http.ServeMux patterns without a method
	// (recordresults.RoutePatterns, console.RoutePatterns,
	// fleethttp.RoutePatterns, MetricsPath). A request none matches is
	// counted as RouteOther, so that the label stays bounded whatever
	// paths clients ask for.
	Routes []string
	// Follow, when set, is the pattern of Routes whose open responses
	// records_follow_clients counts (recordresults.RouteFollow).
	Follow string
}

// HTTPMetrics counts the requests of one server: records_http_requests_total
// by route and code, and records_follow_clients. It is safe for
// concurrent requests.
type HTTPMetrics struct {
	routes   *http.ServeMux // patterns only: finds a request's route label
	follow   string         // the follow route's pattern
	requests *prometheus.CounterVec
	follows  prometheus.Gauge
}

// NewHTTP makes the request metrics of a server answering opts.Routes and
// registers them on reg. It fails, registering nothing, on a pattern
// http.ServeMux refuses (malformed, or one that conflicts with another),
// and, registering nothing more, when reg already holds them.
func NewHTTP(reg prometheus.Registerer, opts HTTPOptions) (*HTTPMetrics, error) {
	m := &HTTPMetrics{
		routes: http.NewServeMux(),
		follow: opts.Follow,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "records_http_requests_total",
			Help: "HTTP requests query serve answered, by route pattern and status code."}, []string{"route", "code"}),
		follows: prometheus.NewGauge(prometheus.GaugeOpts{Name: "records_follow_clients",
			Help: "Follow responses open now."}),
	}
	for _, p := range opts.Routes {
		if err := handlePattern(m.routes, p); err != nil {
			return nil, err
		}
	}
	for _, c := range []prometheus.Collector{m.requests, m.follows} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register the request metrics: %w", err)
		}
	}
	return m, nil
}

// handlePattern adds pattern to mux, turning ServeMux's panic on a bad
// or conflicting pattern into an error.
func handlePattern(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recordstore.Invalidf("route pattern %q: %v", pattern, p)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}

// route returns the route label of r.
func (m *HTTPMetrics) route(r *http.Request) string {
	_, pattern := m.routes.Handler(r)
	if pattern == "" {
		return RouteOther
	}
	return pattern
}

// Wrap counts every request next answers, once it is answered (an
// aborted one too: http.ErrAbortHandler, which the server recovers from),
// by its route and the status next sent (200 when it sent none), and the
// follow responses open while they are.
func (m *HTTPMetrics) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := m.route(r)
		if m.follow != "" && route == m.follow {
			m.follows.Inc()
			defer m.follows.Dec()
		}
		sw := httpx.NewStatusWriter(w)
		defer func() {
			m.requests.WithLabelValues(route, strconv.Itoa(sw.Status())).Inc()
		}()
		next.ServeHTTP(sw, r)
	})
}

// Handler serves what g gathers in the Prometheus text format. A metric
// that cannot be read (a store collector whose status failed) is logged
// at warn on log and left out; the others are served. Scrapes are not
// logged as requests: a scraper asks every few seconds.
func Handler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Mount routes GET (and HEAD) MetricsPath to metrics, another method on
// it to 405 with an Allow header and code unsupported, as the read API
// answers one, and every other request to api.
func Mount(api, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, metrics)
	mux.HandleFunc(MetricsPath, metricsMethod)
	mux.Handle("/", api)
	return mux
}

// metricsMethod answers a method other than GET or HEAD on MetricsPath.
func metricsMethod(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	httpx.WriteError(w, http.StatusMethodNotAllowed, recordstore.Code(recordstore.ErrUnsupported),
		fmt.Sprintf("method %s is not allowed on %s: GET or HEAD", r.Method, r.URL.Path))
}
