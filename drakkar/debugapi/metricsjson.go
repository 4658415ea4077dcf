package debugapi

import (
	"math"
	"net/http"
	"strconv"

	dto "github.com/prometheus/client_model/go"
)

// MetricFamily is one item of GET /api/v1/debug/metrics.
type MetricFamily struct {
	Name string `json:"name"`
	// Type is counter, gauge, summary, histogram, gaugehistogram or
	// unknown (untyped).
	Type string `json:"type"`
	Help string `json:"help"`
	// Source is always "framework": every family comes from the worker's
	// own registry.
	Source  string         `json:"source"`
	Samples []MetricSample `json:"samples"`
}

// MetricSample is one sample of a MetricFamily.
type MetricSample struct {
	// Name is the sample's series name: the family name, or with _bucket,
	// _sum or _count for histograms and summaries.
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
}

// metricsJSON serves GET /api/v1/debug/metrics: the families of
// Options.Metrics, the gatherer /metrics serves, as JSON; [] without one.
// A sample whose value is not finite (NaN, ±Inf) is left out, JSON having
// no number for it.
func (s *server) metricsJSON(w http.ResponseWriter, _ *http.Request) {
	out := []MetricFamily{}
	if s.opts.Metrics != nil {
		fams, err := s.opts.Metrics.Gather()
		if err != nil && len(fams) == 0 {
			s.internal(w, "metrics", err)
			return
		}
		for _, f := range fams {
			out = append(out, familyJSON(f))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// familyJSON converts one gathered family.
func familyJSON(f *dto.MetricFamily) MetricFamily {
	name := f.GetName()
	mf := MetricFamily{Name: name, Help: f.GetHelp(), Source: "framework", Samples: []MetricSample{}}
	add := func(series string, labels map[string]string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		mf.Samples = append(mf.Samples, MetricSample{Name: series, Labels: labels, Value: v})
	}
	with := func(base map[string]string, k, v string) map[string]string {
		m := make(map[string]string, len(base)+1)
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		mf.Type = "counter"
	case dto.MetricType_GAUGE:
		mf.Type = "gauge"
	case dto.MetricType_SUMMARY:
		mf.Type = "summary"
	case dto.MetricType_HISTOGRAM:
		mf.Type = "histogram"
	case dto.MetricType_GAUGE_HISTOGRAM:
		mf.Type = "gaugehistogram"
	default:
		mf.Type = "unknown"
	}
	for _, m := range f.GetMetric() {
		labels := make(map[string]string, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		switch {
		case m.Counter != nil:
			add(name, labels, m.GetCounter().GetValue())
		case m.Gauge != nil:
			add(name, labels, m.GetGauge().GetValue())
		case m.Untyped != nil:
			add(name, labels, m.GetUntyped().GetValue())
		case m.Summary != nil:
			for _, q := range m.GetSummary().GetQuantile() {
				add(name, with(labels, "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)), q.GetValue())
			}
			add(name+"_sum", labels, m.GetSummary().GetSampleSum())
			add(name+"_count", labels, float64(m.GetSummary().GetSampleCount()))
		case m.Histogram != nil:
			h := m.GetHistogram()
			inf := false
			for _, b := range h.GetBucket() {
				inf = inf || math.IsInf(b.GetUpperBound(), 1)
				add(name+"_bucket", with(labels, "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)), float64(b.GetCumulativeCount()))
			}
			if !inf {
				add(name+"_bucket", with(labels, "le", "+Inf"), float64(h.GetSampleCount()))
			}
			add(name+"_sum", labels, h.GetSampleSum())
			add(name+"_count", labels, float64(h.GetSampleCount()))
		}
	}
	return mf
}
