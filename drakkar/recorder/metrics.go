// The recorder's Prometheus metrics.

package recorder

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the recorder's collectors. The gauges are read from the
// recorder when scraped.
type metrics struct {
	sealFailures  prometheus.Counter
	flushFailures prometheus.Counter
	killed        prometheus.Counter
	flushSeconds  prometheus.Histogram
}

// newMetrics makes the recorder's metrics and registers them on reg when
// it is set. Registering twice on one registry (two recorders) fails the
// second registration, which is then left out.
func newMetrics(reg prometheus.Registerer, r *Recorder) *metrics {
	m := &metrics{
		sealFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drakkar_recorder_seal_failures_total",
			Help: "Recorder files whose sealing or move failed (each file once, however often it is retried); they stay in the backlog and are retried.",
		}),
		flushFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drakkar_recorder_flush_failures_total",
			Help: "Flushes of the event buffer that failed; their events went back to the buffer.",
		}),
		killed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drakkar_recorder_previous_run_killed_total",
			Help: "Starts that found the watchdog file of a previous run that did not stop cleanly.",
		}),
		flushSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "drakkar_recorder_flush_duration_seconds",
			Help:    "Time to write one flush of buffered events.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
	}
	if reg == nil {
		return m
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	cs := []prometheus.Collector{
		m.sealFailures, m.flushFailures, m.killed, m.flushSeconds,
		gauge("drakkar_recorder_unsealed_files", "Own recorder files closed but not yet sealed into the history folder.",
			func() float64 { return float64(r.bl.len()) }),
		gauge("drakkar_recorder_buffer_events", "Events buffered in memory, waiting for the next flush.",
			func() float64 { return float64(r.buf.Stats().Size) }),
		counter("drakkar_recorder_dropped_events_total", "Events dropped: the oldest of a full buffer, tail evictions on requeue, and batches dropped after max_flush_retries.",
			func() float64 {
				s := r.buf.Stats()
				return float64(s.DroppedOldest + s.TailEvicted + s.DroppedAfterRetries)
			}),
		counter("drakkar_recorder_flush_retries_total", "Failed flushes whose events were put back for another try.",
			func() float64 { return float64(r.buf.Stats().Retries) }),
	}
	for _, c := range cs {
		_ = reg.Register(c)
	}
	return m
}
