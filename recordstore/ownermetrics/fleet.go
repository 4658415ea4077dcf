// The fleet collector: a tenant fleet's counters (fleet.Stats), read at
// scrape time.

package ownermetrics

import (
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/prometheus/client_golang/prometheus"
)

// fleetMetric is one metric of the fleet collector.
type fleetMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(fleet.Stats) int64
}

// fleetMetrics are the fleet collector's metrics, in the order they are
// sent. A new one is one entry here (and a row in docs/fleet.md).
var fleetMetrics = []fleetMetric{
	{prometheus.NewDesc("records_fleet_stores_open", "Fleet stores open in this process now.", nil, nil),
		prometheus.GaugeValue, func(s fleet.Stats) int64 { return int64(s.Open) }},
	{prometheus.NewDesc("records_fleet_stores_leased", "Open fleet stores held by a request now.", nil, nil),
		prometheus.GaugeValue, func(s fleet.Stats) int64 { return int64(s.Leased) }},
	{prometheus.NewDesc("records_fleet_opens_total", "Fleet stores opened (a shared first open counts once).", nil, nil),
		prometheus.CounterValue, func(s fleet.Stats) int64 { return s.Opens }},
	{prometheus.NewDesc("records_fleet_closes_total", "Fleet stores closed.", nil, nil),
		prometheus.CounterValue, func(s fleet.Stats) int64 { return s.Closes }},
	{prometheus.NewDesc("records_fleet_evictions_total", "Fleet stores closed for --max-open.", nil, nil),
		prometheus.CounterValue, func(s fleet.Stats) int64 { return s.Evictions }},
	{prometheus.NewDesc("records_fleet_idle_closes_total", "Fleet stores closed for --idle-close.", nil, nil),
		prometheus.CounterValue, func(s fleet.Stats) int64 { return s.IdleCloses }},
}

// fleetCollector reads a fleet's Stats once per scrape.
type fleetCollector struct {
	f *fleet.Fleet
}

// NewFleetCollector returns a prometheus.Collector of f's counters in
// this process (fleet.Stats, read at each scrape): the gauges
// records_fleet_stores_open and records_fleet_stores_leased, and the
// counters records_fleet_opens_total, records_fleet_closes_total,
// records_fleet_evictions_total (closed for Options.MaxOpen) and
// records_fleet_idle_closes_total (closed for Options.IdleClose).
func NewFleetCollector(f *fleet.Fleet) prometheus.Collector {
	return fleetCollector{f: f}
}

// Describe sends the descriptors of every metric Collect sends.
func (c fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range fleetMetrics {
		ch <- m.desc
	}
}

// Collect reads the fleet's Stats and sends each metric of it.
func (c fleetCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.f.Stats()
	for _, m := range fleetMetrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, float64(m.value(s)))
	}
}
