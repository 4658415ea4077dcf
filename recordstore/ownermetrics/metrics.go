// The Prometheus metrics of the owner's hooks, and New, which registers
// them.

package ownermetrics

import (
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus metrics fed by one store's hooks (Hooks).
type Metrics struct {
	appends         *prometheus.CounterVec
	appendRows      *prometheus.CounterVec
	ingestedBatches prometheus.Counter
	ingestedRows    prometheus.Counter
	failed          prometheus.Counter
	retried         prometheus.Counter
	ingestLatency   prometheus.Histogram
	awaitLatency    *prometheus.HistogramVec
	groupCommit     prometheus.Histogram
	promotions      prometheus.Counter
	sweeps          *prometheus.CounterVec
	sweepDuration   prometheus.Histogram
}

// Roles are the values of the role label: owner.Role's, but closed (no
// append is made in it).
var Roles = []owner.Role{owner.RoleOwner, owner.RoleNonOwner, owner.RoleDetached, owner.RoleReadOnly}

// latencyBuckets span a spooled append's round trip (low milliseconds) to
// a batch that waited for a busy owner (a minute).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// New makes the metrics and registers them on reg. It fails, registering
// nothing more, when reg already holds one of them (a second store's
// metrics need another registry, or prometheus.WrapRegistererWith a
// store label).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		appends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "records_appends_total",
			Help: "Appends this process made through the store (Store.Append, AppendBuffer), by the role it had: owner (applied directly) or non-owner/detached (through the spool)."}, []string{"role"}),
		appendRows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "records_append_rows_total",
			Help: "Rows of the appends of records_appends_total, by role."}, []string{"role"}),
		ingestedBatches: prometheus.NewCounter(prometheus.CounterOpts{Name: "records_batches_ingested_total",
			Help: "Spooled batches this process committed as owner."}),
		ingestedRows: prometheus.NewCounter(prometheus.CounterOpts{Name: "records_ingested_rows_total",
			Help: "Rows the appends of the ingested batches added."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "records_batches_failed_total",
			Help: "Spooled batches this process, as owner, moved to failed/."}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{Name: "records_batches_retried_total",
			Help: "Times this process, as owner, held a batch that failed transiently for another try."}),
		ingestLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "records_ingest_latency_seconds",
			Help: "Time from a batch's creation by its producer (the spool publish) to its commit by the owner.", Buckets: latencyBuckets}),
		awaitLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "records_await_latency_seconds",
			Help: "Time a wait for a batch's outcome took (Await, and every write through the spool); outcome answered or unanswered (an error, or the caller gave up).", Buckets: latencyBuckets}, []string{"outcome"}),
		groupCommit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "records_group_commit_batches",
			Help: "Batches applied together in one ingest transaction.", Buckets: prometheus.ExponentialBuckets(1, 2, 10)}),
		promotions: prometheus.NewCounter(prometheus.CounterOpts{Name: "records_promotions_total",
			Help: "Times this process took the store over from an owner that went away."}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "records_sweeps_total",
			Help: "Runs of the retention sweeper, by result (ok or error)."}, []string{"result"}),
		sweepDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "records_sweep_duration_seconds",
			Help: "Time one run of the retention sweeper took.", Buckets: prometheus.DefBuckets}),
	}
	// Every label value exists from the start, at 0, so that a rate over
	// it has a first point.
	for _, r := range Roles {
		m.appends.WithLabelValues(string(r))
		m.appendRows.WithLabelValues(string(r))
	}
	for _, o := range []string{"answered", "unanswered"} {
		m.awaitLatency.WithLabelValues(o)
	}
	for _, r := range []string{"ok", "error"} {
		m.sweeps.WithLabelValues(r)
	}
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register the store's metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.appends, m.appendRows, m.ingestedBatches, m.ingestedRows, m.failed, m.retried,
		m.ingestLatency, m.awaitLatency, m.groupCommit, m.promotions, m.sweeps, m.sweepDuration}
}

// Hooks returns the hooks that feed the metrics, for owner.Options.Metrics
// or records.Options.Owner.Metrics.
func (m *Metrics) Hooks() owner.Metrics {
	return owner.Metrics{
		Append:      m.append,
		Ingested:    m.ingest,
		Failed:      m.failed.Inc,
		Retried:     m.retried.Inc,
		GroupCommit: func(n int) { m.groupCommit.Observe(float64(n)) },
		Awaited:     m.await,
		Promoted:    func(int64) { m.promotions.Inc() },
		Swept:       m.swept,
	}
}

func (m *Metrics) append(role owner.Role, rows int) {
	r := roleLabel(role)
	m.appends.WithLabelValues(r).Inc()
	m.appendRows.WithLabelValues(r).Add(float64(rows))
}

func (m *Metrics) ingest(rows int, latency time.Duration) {
	m.ingestedBatches.Inc()
	m.ingestedRows.Add(float64(rows))
	m.ingestLatency.Observe(latency.Seconds())
}

func (m *Metrics) await(took time.Duration, answered bool) {
	o := "unanswered"
	if answered {
		o = "answered"
	}
	m.awaitLatency.WithLabelValues(o).Observe(took.Seconds())
}

func (m *Metrics) swept(took time.Duration, err error) {
	r := "ok"
	if err != nil {
		r = "error"
	}
	m.sweeps.WithLabelValues(r).Inc()
	m.sweepDuration.Observe(took.Seconds())
}

// roleLabel keeps the role label in the bounded set Roles: any other value
// is counted as owner.RoleNonOwner's (the store only appends in these).
func roleLabel(r owner.Role) string {
	for _, known := range Roles {
		if r == known {
			return string(r)
		}
	}
	return string(owner.RoleNonOwner)
}
