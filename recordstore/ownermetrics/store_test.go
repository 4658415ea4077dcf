// The store collector over a hand-made view (each role, damage, and a
// status that cannot be read), and over a real store through ViewOf.

package ownermetrics_test

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/ownermetrics"
	"github.com/fb46ecde/records/recordstore/records"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gatherStore collects the collector of v alone and returns its gauges by
// name (a labelled metric as name{value}), with the gathering error.
func gatherStore(v ownermetrics.StoreView) (map[string]float64, error) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(ownermetrics.NewStoreCollector(v))
	fams, err := reg.Gather()
	out := map[string]float64{}
	for _, f := range fams {
		ExpectWithOffset(1, f.GetType()).To(Equal(dto.MetricType_GAUGE), f.GetName())
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "{" + l.GetValue() + "}"
			}
			out[name] = m.GetGauge().GetValue()
		}
	}
	return out, err
}

// view is a StoreView with role r, status st and damage dmg.
func view(r owner.Role, st owner.Status, statusErr, dmg error) ownermetrics.StoreView {
	return ownermetrics.StoreView{
		Role:   func() owner.Role { return r },
		Status: func(context.Context) (owner.Status, error) { return st, statusErr },
		Damage: func() error { return dmg },
	}
}

var _ = Describe("the store collector", func() {
	DescribeTable("sets records_owner_role to 1 for the current role alone",
		func(r owner.Role, want map[string]float64) {
			got, err := gatherStore(view(r, owner.Status{}, nil, nil))
			Expect(err).NotTo(HaveOccurred())
			for role, v := range want {
				Expect(got).To(HaveKeyWithValue("records_owner_role{"+role+"}", v))
			}
		},
		Entry("owner", owner.RoleOwner, map[string]float64{"owner": 1, "non-owner": 0, "detached": 0, "read-only": 0}),
		Entry("non-owner", owner.RoleNonOwner, map[string]float64{"owner": 0, "non-owner": 1, "detached": 0, "read-only": 0}),
		Entry("detached", owner.RoleDetached, map[string]float64{"owner": 0, "non-owner": 0, "detached": 1, "read-only": 0}),
		Entry("read-only", owner.RoleReadOnly, map[string]float64{"owner": 0, "non-owner": 0, "detached": 0, "read-only": 1}),
		Entry("closed: none", owner.RoleClosed, map[string]float64{"owner": 0, "non-owner": 0, "detached": 0, "read-only": 0}),
	)

	It("reads the owner's status and the damage at each scrape", func() {
		st := owner.Status{State: owner.State{Epoch: 7, Backlog: 2, Failed: 3, Refused: 4}, HeartbeatAgeMS: 1500}
		got, err := gatherStore(view(owner.RoleOwner, st, nil, errors.New("a damaged page")))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveKeyWithValue("records_store_corrupt", 1.0))
		Expect(got).To(HaveKeyWithValue("records_epoch", 7.0))
		Expect(got).To(HaveKeyWithValue("records_spool_backlog_batches", 2.0))
		Expect(got).To(HaveKeyWithValue("records_spool_failed_batches", 3.0))
		Expect(got).To(HaveKeyWithValue("records_refused_entries", 4.0))
		Expect(got).To(HaveKeyWithValue("records_heartbeat_age_seconds", 1.5))
	})

	It("leaves out the metrics of a status it cannot read, with the error, and serves the role and damage", func() {
		got, err := gatherStore(view(owner.RoleNonOwner, owner.Status{}, errors.New("state file unreadable"), nil))
		Expect(err).To(MatchError(ContainSubstring("state file unreadable")))
		Expect(got).To(HaveKeyWithValue("records_owner_role{non-owner}", 1.0))
		Expect(got).To(HaveKeyWithValue("records_store_corrupt", 0.0))
		Expect(got).NotTo(HaveKey("records_epoch"))
		Expect(got).NotTo(HaveKey("records_refused_entries"))
	})

	It("counts a view without Damage as sound", func() {
		v := view(owner.RoleOwner, owner.Status{}, nil, nil)
		v.Damage = nil
		got, err := gatherStore(v)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveKeyWithValue("records_store_corrupt", 0.0))
	})

	It("reads a real store through ViewOf: its role, its epoch, no damage", func(ctx SpecContext) {
		st, err := records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		got, err := gatherStore(ownermetrics.ViewOf(st))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveKeyWithValue("records_owner_role{owner}", 1.0))
		Expect(got).To(HaveKeyWithValue("records_store_corrupt", 0.0))
		Expect(got).To(HaveKeyWithValue("records_epoch", BeNumerically(">=", 1)))
	})
})
