// Prometheus metrics of the archive pass.

package archive

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pass's gauges and counter. One Metrics lives as long as
// the worker and is shared by its passes.
type Metrics struct {
	// Bytes is drakkar_recorder_archive_bytes: the total size of the
	// cluster's archives, refreshed at the start of each pass.
	Bytes prometheus.Gauge
	// Files is drakkar_recorder_archive_files: how many archives the
	// cluster's history folder holds, refreshed with Bytes.
	Files prometheus.Gauge
	// Failures is drakkar_recorder_archive_failures_total: passes that
	// took the lock and did not finish cleanly (a window failed, the pass
	// was fenced, an unexpected error).
	Failures prometheus.Counter
}

// NewMetrics creates the metrics and registers them on reg when it is not
// nil. A metric already registered (a second recorder in one process) is
// reused.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drakkar_recorder_archive_bytes",
			Help: "Total size of the archives in this worker's cluster history folder.",
		}),
		Files: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drakkar_recorder_archive_files",
			Help: "Number of archives in this worker's cluster history folder.",
		}),
		Failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drakkar_recorder_archive_failures_total",
			Help: "Archive passes that took the lock and did not finish cleanly.",
		}),
	}
	if reg != nil {
		m.Bytes = register(reg, m.Bytes).(prometheus.Gauge)
		m.Files = register(reg, m.Files).(prometheus.Gauge)
		m.Failures = register(reg, m.Failures).(prometheus.Counter)
	}
	return m
}

// register registers c, or returns the collector already registered
// under its name.
func register(reg prometheus.Registerer, c prometheus.Collector) prometheus.Collector {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector
		}
	}
	return c
}
