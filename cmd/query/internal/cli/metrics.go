// Metrics: the Prometheus /metrics route of query serve, read from the
// store at scrape time.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricRoles are the values of records_owner_role's role label: a fixed
// set, so that the label stays bounded. RoleClosed is left out: a closed
// store is not scraped.
var metricRoles = []owner.Role{owner.RoleOwner, owner.RoleNonOwner, owner.RoleDetached, owner.RoleReadOnly}

// statusTimeout bounds the owner status call of one scrape (a non-owner
// asks the owner over its socket).
const statusTimeout = 5 * time.Second

// The metrics of the store; docs/cli.md (query serve) says what each means.
var (
	roleDesc = prometheus.NewDesc("records_owner_role",
		"This process's role for the store: 1 for the current role, 0 for the others.", []string{"role"}, nil)
	backlogDesc = prometheus.NewDesc("records_spool_backlog_batches",
		"Batches in the spool's incoming/ folder the owner has not applied yet.", nil, nil)
	failedDesc = prometheus.NewDesc("records_spool_failed_batches",
		"Batches in the spool's failed/ folder, as the owner counts them (query status' failed).", nil, nil)
	refusedDesc = prometheus.NewDesc("records_refused_entries",
		"Entries the current owner refused in batches it committed since it took the store over.", nil, nil)
	corruptDesc = prometheus.NewDesc("records_store_corrupt",
		"1 once this process met a damaged live file (GET /healthz answers 503 corrupt), else 0.", nil, nil)
	epochDesc = prometheus.NewDesc("records_epoch",
		"The epoch of the store's current owner (0 when no process owns it).", nil, nil)
	heartbeatDesc = prometheus.NewDesc("records_heartbeat_age_seconds",
		"Age of the owner's last heartbeat in its state file, in seconds (0 when no process owns it).", nil, nil)
)

// storeView is what the collector reads of a store: an owner.Store has
// these methods; Damage is the backend's (nil when it met no damage or
// cannot tell).
type storeView struct {
	Role   func() owner.Role
	Status func(context.Context) (owner.Status, error)
	Damage func() error
}

// storeCollector is a prometheus.Collector that reads the store's status
// on every scrape: there is no background loop, and a scrape sees what
// query status would print at that moment.
type storeCollector struct {
	v storeView
}

var _ prometheus.Collector = storeCollector{}

// Describe sends the descriptors of every metric Collect may send.
func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{roleDesc, backlogDesc, failedDesc, refusedDesc, corruptDesc, epochDesc, heartbeatDesc} {
		ch <- d
	}
}

// Collect reads the role, the damage and the owner's status. When the
// status cannot be read, the metrics taken from it are sent as invalid
// (the scrape logs the error and answers the others).
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	role := c.v.Role()
	for _, r := range metricRoles {
		ch <- gauge(roleDesc, boolValue(r == role), string(r))
	}
	ch <- gauge(corruptDesc, boolValue(c.v.Damage() != nil))

	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	st, err := c.v.Status(ctx)
	if err != nil {
		for _, d := range []*prometheus.Desc{backlogDesc, failedDesc, refusedDesc, epochDesc, heartbeatDesc} {
			ch <- prometheus.NewInvalidMetric(d, err)
		}
		return
	}
	ch <- gauge(backlogDesc, float64(st.Backlog))
	ch <- gauge(failedDesc, float64(st.Failed))
	ch <- gauge(refusedDesc, float64(st.Refused))
	ch <- gauge(epochDesc, float64(st.Epoch))
	ch <- gauge(heartbeatDesc, float64(st.HeartbeatAgeMS)/1000)
}

// gauge is a constant gauge of d (whose labels are all fixed by the Desc,
// so it cannot fail).
func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// damageable is the optional capability of a backend that remembers the
// damage its calls met (sqlite.Backend.Damage).
type damageable interface{ Damage() error }

// damageOf returns b's Damage method, or one that reports none when b
// cannot tell.
func damageOf(b any) func() error {
	if d, ok := b.(damageable); ok {
		return d.Damage
	}
	return func() error { return nil }
}

// metricsHandler serves what reg holds (the owner's and the HTTP metrics
// serve registered on it) with the store's gauges and the Go runtime's and
// the process's metrics added, in Prometheus text format. A metric that cannot be read is
// logged at warn and left out; the others are served.
func metricsHandler(reg *prometheus.Registry, v storeView, log *slog.Logger) http.Handler {
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		storeCollector{v: v},
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// withMetrics routes GET (and HEAD) /metrics to metrics, another method on
// /metrics to a 405 as the API answers one, and everything else to api.
// Scrapes are not logged as requests: a scraper asks every few seconds.
func withMetrics(api, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("/metrics", metricsMethod)
	mux.Handle("/", api)
	return mux
}

// metricsMethod answers a method other than GET or HEAD on /metrics with
// 405, an Allow header and code unsupported, as the API's routes do.
func metricsMethod(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code = recordstore.Code(recordstore.ErrUnsupported)
	body.Error.Message = fmt.Sprintf("method %s is not allowed on %s: GET or HEAD", r.Method, r.URL.Path)
	w.Header().Set("Allow", "GET, HEAD")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMethodNotAllowed)
	_ = json.NewEncoder(w).Encode(body) // the client may be gone; nothing to do then
}
