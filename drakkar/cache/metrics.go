// The cache's Prometheus metrics (drakkar_cache_*), bounded labels only.

package cache

import "github.com/prometheus/client_golang/prometheus"

// metrics are the cache's collectors; the gauges are read when scraped.
type metrics struct {
	hits           *prometheus.CounterVec // layer: memory | file
	misses         prometheus.Counter
	flushFailures  prometheus.Counter
	flushedEntries prometheus.Counter
	flushSeconds   prometheus.Histogram
	expired        prometheus.Counter
	pagesServed    prometheus.Counter
	pulledRows     prometheus.Counter
	peerFailures   *prometheus.CounterVec // reason: request | status | page | apply
}

// peerFailureReasons are the reason label values of
// drakkar_cache_peer_sync_failures_total.
var peerFailureReasons = []string{"request", "status", "page", "apply"}

// newMetrics makes the metrics and registers them on reg when set (a
// second cache on one registry keeps its collectors unregistered).
func newMetrics(reg prometheus.Registerer, c *Cache) *metrics {
	m := &metrics{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drakkar_cache_hits_total",
			Help: "Get calls that found an entry, by layer: memory or file."}, []string{"layer"}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_misses_total",
			Help: "Get calls that found no entry in memory nor in the file."}),
		flushFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_flush_failures_total",
			Help: "Flushes that failed; their entries went back to the dirty map."}),
		flushedEntries: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_flushed_entries_total",
			Help: "Dirty entries written by committed flushes."}),
		flushSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drakkar_cache_flush_duration_seconds",
			Help: "Time to write one flush.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_expired_deleted_total",
			Help: "Expired rows deleted by the cleanup."}),
		pagesServed: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_exchange_pages_served_total",
			Help: "Pages of the cache exchange this worker served."}),
		pulledRows: prometheus.NewCounter(prometheus.CounterOpts{Name: "drakkar_cache_peer_rows_applied_total",
			Help: "Rows pulled from peers and applied through the LWW rule."}),
		peerFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drakkar_cache_peer_sync_failures_total",
			Help: "Pulls from a peer that failed, by reason: request, status, page or apply."}, []string{"reason"}),
	}
	// Every reason has a series from the start (0 until its first
	// failure), so rate() and increase() see the first one.
	for _, reason := range peerFailureReasons {
		m.peerFailures.WithLabelValues(reason)
	}
	if reg == nil {
		return m
	}
	dirty := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "drakkar_cache_dirty_entries",
		Help: "Entries waiting for the next flush."}, func() float64 { return float64(c.Dirty()) })
	for _, col := range []prometheus.Collector{m.hits, m.misses, m.flushFailures, m.flushedEntries, m.flushSeconds,
		m.expired, m.pagesServed, m.pulledRows, m.peerFailures, dirty} {
		_ = reg.Register(col)
	}
	return m
}
