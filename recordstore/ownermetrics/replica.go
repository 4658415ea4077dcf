// Replication metrics: a store's replica position, lag and failure, read
// at scrape time from its status (a non-owner asks the owner), and a
// fleet's replication health.

package ownermetrics

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/prometheus/client_golang/prometheus"
)

// The replication metrics; docs/cli.md (query serve) says what each means.
var (
	replicaTXIDDesc = prometheus.NewDesc("records_replica_txid",
		"The last transaction the store's replica holds (Litestream's transaction id).", nil, nil)
	replicaLocalTXIDDesc = prometheus.NewDesc("records_replica_local_txid",
		"The last transaction of the live file the replicator has seen.", nil, nil)
	replicaLagSecondsDesc = prometheus.NewDesc("records_replica_lag_seconds",
		"How long the oldest commit the replica does not hold yet has waited, in seconds (0 when it holds every commit).", nil, nil)
	replicaLagBytesDesc = prometheus.NewDesc("records_replica_lag_bytes",
		"Bytes of the WAL written since the last position shipped to the replica.", nil, nil)
	replicaFailingDesc = prometheus.NewDesc("records_replica_failing",
		"1 while shipping to the replica fails, else 0.", nil, nil)
	replicaFailingSinceDesc = prometheus.NewDesc("records_replica_failing_since_seconds",
		"Unix time at which shipping started to fail (0 while it works).", nil, nil)
	fleetReplicatingDesc = prometheus.NewDesc("records_fleet_replica_stores",
		"Open stores of the fleet this process owns and replicates.", nil, nil)
	fleetReplicaFailingDesc = prometheus.NewDesc("records_fleet_replica_failing_stores",
		"Of them, the stores whose last ship to the replica failed.", nil, nil)
	fleetReplicaPendingDesc = prometheus.NewDesc("records_fleet_replica_pending_bytes",
		"Bytes of those stores' WALs not shipped yet, summed.", nil, nil)
	fleetReplicaWorstLagDesc = prometheus.NewDesc("records_fleet_replica_worst_lag_seconds",
		"The largest replication lag among those stores, in seconds.", nil, nil)
)

// NewReplicaCollector returns the collector of a store's replication
// metrics (records_replica_*), read from status at each scrape (for a
// records.Store: st.Status). It sends nothing while the owner does not
// replicate or the status cannot be read (the store collector reports
// that).
func NewReplicaCollector(status func(context.Context) (owner.Status, error)) prometheus.Collector {
	return replicaCollector{status: status}
}

// replicaCollector is NewReplicaCollector's collector.
type replicaCollector struct {
	status func(context.Context) (owner.Status, error)
}

var _ prometheus.Collector = replicaCollector{}

// Describe sends the descriptors of every metric Collect may send.
func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{replicaTXIDDesc, replicaLocalTXIDDesc, replicaLagSecondsDesc, replicaLagBytesDesc, replicaFailingDesc, replicaFailingSinceDesc} {
		ch <- d
	}
}

// Collect reads the owner's status; a status that cannot be read is the
// store collector's to report.
func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), StatusTimeout)
	defer cancel()
	st, err := c.status(ctx)
	if err != nil || st.Replica == nil {
		return
	}
	r := st.Replica
	ch <- gauge(replicaTXIDDesc, float64(r.ReplicaTXID))
	ch <- gauge(replicaLocalTXIDDesc, float64(r.LocalTXID))
	ch <- gauge(replicaLagSecondsDesc, r.LagSeconds)
	ch <- gauge(replicaLagBytesDesc, float64(r.LagBytes))
	ch <- gauge(replicaFailingDesc, boolValue(r.LastError != ""))
	ch <- gauge(replicaFailingSinceDesc, unixSeconds(r.FailingSince))
}

// unixSeconds is t as Unix seconds, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// NewFleetReplicaCollector returns the collector of a fleet's replication
// health (records_fleet_replica_*, from fleet.ReplicaHealth).
func NewFleetReplicaCollector(f *fleet.Fleet) prometheus.Collector {
	return fleetReplicaCollector{f: f}
}

// fleetReplicaCollector is NewFleetReplicaCollector's collector.
type fleetReplicaCollector struct{ f *fleet.Fleet }

// Describe sends the descriptors of every metric Collect sends.
func (c fleetReplicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{fleetReplicatingDesc, fleetReplicaFailingDesc, fleetReplicaPendingDesc, fleetReplicaWorstLagDesc} {
		ch <- d
	}
}

// Collect reads fleet.ReplicaHealth (no I/O but a stat per store).
func (c fleetReplicaCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.f.ReplicaHealth()
	ch <- gauge(fleetReplicatingDesc, float64(h.Replicating))
	ch <- gauge(fleetReplicaFailingDesc, float64(h.Failing))
	ch <- gauge(fleetReplicaPendingDesc, float64(h.PendingBytes))
	ch <- gauge(fleetReplicaWorstLagDesc, h.WorstLagSeconds)
}
