// Specs for the Prometheus adapter: a real store's work, through the
// hooks, shows in the registry the caller gave.

package ownermetrics_test

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/ownermetrics"
	"github.com/fb46ecde/records/recordstore/records"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gathered returns the registry's families by name.
func gathered(reg *prometheus.Registry) map[string]*dto.MetricFamily {
	fams, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value returns the counter value, or the histogram's sample count, of the
// metric of family name whose labels are labels (name, value pairs).
func value(reg *prometheus.Registry, name string, labels ...string) float64 {
	f, ok := gathered(reg)[name]
	ExpectWithOffset(1, ok).To(BeTrue(), "family %s is registered", name)
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		if h := m.GetHistogram(); h != nil {
			return float64(h.GetSampleCount())
		}
		return m.GetCounter().GetValue()
	}
	Fail("no metric " + name + " with those labels")
	return 0
}

var events = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}

var _ = Describe("the Prometheus metrics of a store", func() {
	It("count a real owner's appends by role, and its sweeper's runs, on the caller's registry", func(ctx SpecContext) {
		reg := prometheus.NewRegistry()
		m, err := ownermetrics.New(reg)
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		st, err := records.Open(ctx, path, records.Options{Owner: records.OwnerOptions{Metrics: m.Hooks()}, SweepInterval: 5 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)

		_, err = st.Append(ctx, "s", "events", []recordstore.Row{{"msg": "a"}, {"msg": "b"}}, owner.AppendOptions{Declare: &events})
		Expect(err).NotTo(HaveOccurred())
		Expect(value(reg, "records_appends_total", "role", "owner")).To(Equal(1.0))
		Expect(value(reg, "records_append_rows_total", "role", "owner")).To(Equal(2.0))
		Expect(value(reg, "records_appends_total", "role", "non-owner")).To(BeZero(), "every role is there from the start")
		Eventually(func() float64 { return value(reg, "records_sweeps_total", "result", "ok") }).Should(BeNumerically(">=", 1))
		Expect(value(reg, "records_sweep_duration_seconds")).To(BeNumerically(">=", 1))
	})

	It("turn each hook into its metric", func() {
		reg := prometheus.NewRegistry()
		m, err := ownermetrics.New(reg)
		Expect(err).NotTo(HaveOccurred())
		h := m.Hooks()
		h.Ingested(3, 20*time.Millisecond)
		h.Ingested(1, time.Second)
		h.Failed()
		h.Retried()
		h.Retried()
		h.GroupCommit(2)
		h.Awaited(time.Millisecond, true)
		h.Awaited(time.Second, false)
		h.Promoted(7)
		h.Swept(time.Millisecond, errors.New("disk full"))
		h.Append(owner.RoleNonOwner, 5)
		Expect(value(reg, "records_batches_ingested_total")).To(Equal(2.0))
		Expect(value(reg, "records_ingested_rows_total")).To(Equal(4.0))
		Expect(value(reg, "records_ingest_latency_seconds")).To(Equal(2.0))
		Expect(value(reg, "records_batches_failed_total")).To(Equal(1.0))
		Expect(value(reg, "records_batches_retried_total")).To(Equal(2.0))
		Expect(value(reg, "records_group_commit_batches")).To(Equal(1.0))
		Expect(value(reg, "records_await_latency_seconds", "outcome", "answered")).To(Equal(1.0))
		Expect(value(reg, "records_await_latency_seconds", "outcome", "unanswered")).To(Equal(1.0))
		Expect(value(reg, "records_promotions_total")).To(Equal(1.0))
		Expect(value(reg, "records_sweeps_total", "result", "error")).To(Equal(1.0))
		Expect(value(reg, "records_append_rows_total", "role", "non-owner")).To(Equal(5.0))
	})

	It("refuses a registry that already holds them", func() {
		reg := prometheus.NewRegistry()
		_, err := ownermetrics.New(reg)
		Expect(err).NotTo(HaveOccurred())
		_, err = ownermetrics.New(reg)
		var already prometheus.AlreadyRegisteredError
		Expect(errors.As(err, &already)).To(BeTrue(), "%v", err)
	})
})
