// HTTP metrics of query serve: requests by route and status code, and the
// follow responses open, with route labels from a fixed set of patterns.

package cli

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// routePatterns are the values of the route label: the routes serve
// answers (the read API, the console, /metrics), as ServeMux patterns. A
// request no pattern matches is counted as route "other", so that the
// label stays bounded whatever paths clients ask for.
var routePatterns = []string{
	"/healthz", "/metrics", "/{$}",
	"/api/v1/status", "/api/v1/batches/{batch}",
	"/api/v1/streams", "/api/v1/streams/{stream}",
	"/api/v1/streams/{stream}/rows", "/api/v1/streams/{stream}/page", routeFollow,
	"/api/v1/kinds", "/api/v1/kinds/{kind}", "/api/v1/views", "/api/v1/views/{view}",
	"/console/{$}", "/console/app.js", "/console/app.css",
	"/console/api/config", "/console/api/owner", "/console/api/kinds/{kind}",
	"/console/api/spool", "/console/api/spool/failed/{batch}/retry",
}

// routeFollow is the pattern of the follow route, whose open responses
// records_follow_clients counts.
const routeFollow = "/api/v1/streams/{stream}/follow"

// routeOther is the route label of a request no pattern matches.
const routeOther = "other"

// httpMetrics counts serve's requests.
type httpMetrics struct {
	routes   *http.ServeMux // patterns only: finds a request's route label
	follow   string         // the follow route's pattern
	requests *prometheus.CounterVec
	follows  prometheus.Gauge
}

// newHTTPMetrics makes serve's HTTP metrics and registers them on reg.
func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	return newRouteMetrics(reg, routePatterns, routeFollow)
}

// newRouteMetrics makes HTTP metrics whose route labels are patterns
// (follow being the follow route's) and registers them on reg.
func newRouteMetrics(reg prometheus.Registerer, patterns []string, follow string) (*httpMetrics, error) {
	m := &httpMetrics{
		routes: http.NewServeMux(),
		follow: follow,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "records_http_requests_total",
			Help: "HTTP requests query serve answered, by route pattern and status code."}, []string{"route", "code"}),
		follows: prometheus.NewGauge(prometheus.GaugeOpts{Name: "records_follow_clients",
			Help: "Follow responses open now."}),
	}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range patterns {
		m.routes.Handle(p, nop)
	}
	for _, c := range []prometheus.Collector{m.requests, m.follows} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// route returns the route label of r.
func (m *httpMetrics) route(r *http.Request) string {
	_, pattern := m.routes.Handler(r)
	if pattern == "" {
		return routeOther
	}
	return pattern
}

// wrap counts every request next answers (once it is answered) and the
// follow responses open.
func (m *httpMetrics) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := m.route(r)
		if route == m.follow {
			m.follows.Inc()
			defer m.follows.Dec()
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			// Counted also when the handler aborts the response
			// (http.ErrAbortHandler), which the server recovers from.
			m.requests.WithLabelValues(route, strconv.Itoa(sw.code())).Inc()
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status a handler sent. Unwrap lets
// http.ResponseController reach the connection's Flush (follow and rows
// flush as they go).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the underlying writer, for handlers that assert
// http.Flusher.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying writer (http.ResponseController).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the status sent, 200 when the handler wrote nothing (net/http
// sends 200 then).
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
