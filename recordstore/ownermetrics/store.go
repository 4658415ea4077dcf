// The store collector: the gauges of one store (its role, damage and the
// owner's status), read at scrape time.

package ownermetrics

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/prometheus/client_golang/prometheus"
)

// StatusTimeout bounds the owner status call of one scrape (a non-owner
// asks the owner over its socket).
const StatusTimeout = 5 * time.Second

// StoreView is what the store collector reads of a store. ViewOf makes one
// of an *owner.Store; a test or another kind of store fills the fields.
type StoreView struct {
	// Role is the process's role for the store now.
	Role func() owner.Role
	// Status is the owner's status as this process sees it
	// (owner.Store.Status).
	Status func(context.Context) (owner.Status, error)
	// Damage is the first damage the store's backend met, or nil; nil
	// Damage: the backend cannot tell, and the store counts as sound.
	Damage func() error
}

// damageable is the optional capability of a backend that remembers the
// damage its calls met (sqlite.Backend.Damage).
type damageable interface{ Damage() error }

// ViewOf returns the view of st: its Role and Status, and its backend's
// Damage when the backend has one (a *sqlite.Backend does).
func ViewOf[T owner.Target](st *owner.Store[T]) StoreView {
	v := StoreView{Role: st.Role, Status: st.Status}
	if d, ok := any(st.Backend()).(damageable); ok {
		v.Damage = d.Damage
	}
	return v
}

// The store's gauges; docs/cli.md (query serve, "Metrics") says what each
// means.
var (
	roleDesc = prometheus.NewDesc("records_owner_role",
		"This process's role for the store: 1 for the current role, 0 for the others.", []string{"role"}, nil)
	corruptDesc = prometheus.NewDesc("records_store_corrupt",
		"1 once this process met a damaged live file (GET /healthz answers 503 corrupt), else 0.", nil, nil)
)

// statusGauge is a gauge the store collector reads from the owner's
// status.
type statusGauge struct {
	desc  *prometheus.Desc
	value func(owner.Status) float64
}

// statusGauges are the gauges read from the owner's status, in the order
// they are sent. A new one is one entry here (and a row in docs/cli.md).
var statusGauges = []statusGauge{
	{prometheus.NewDesc("records_spool_backlog_batches",
		"Batches in the spool's incoming/ folder the owner has not applied yet.", nil, nil),
		func(s owner.Status) float64 { return float64(s.Backlog) }},
	{prometheus.NewDesc("records_spool_failed_batches",
		"Batches in the spool's failed/ folder, as the owner counts them (query status' failed).", nil, nil),
		func(s owner.Status) float64 { return float64(s.Failed) }},
	{prometheus.NewDesc("records_refused_entries",
		"Entries the current owner refused in batches it committed since it took the store over.", nil, nil),
		func(s owner.Status) float64 { return float64(s.Refused) }},
	{prometheus.NewDesc("records_epoch",
		"The epoch of the store's current owner (0 when no process owns it).", nil, nil),
		func(s owner.Status) float64 { return float64(s.Epoch) }},
	{prometheus.NewDesc("records_heartbeat_age_seconds",
		"Age of the owner's last heartbeat in its state file, in seconds (0 when no process owns it).", nil, nil),
		func(s owner.Status) float64 { return float64(s.HeartbeatAgeMS) / 1000 }},
}

// storeCollector reads a store's view on every scrape: there is no
// background loop, and a scrape sees what query status would print at
// that moment.
type storeCollector struct {
	v StoreView
}

// NewStoreCollector returns a prometheus.Collector of v's gauges:
// records_owner_role (1 for the current role among owner, non-owner,
// detached and read-only; all 0 when closed), records_store_corrupt, and
// the owner's status: records_spool_backlog_batches,
// records_spool_failed_batches, records_refused_entries, records_epoch,
// records_heartbeat_age_seconds. Each scrape reads v (the status with
// StatusTimeout); when the status cannot be read, its gauges are sent as
// invalid metrics carrying the error, which promhttp (Handler) logs while
// it serves the others. Register it once per registry: its names are
// fixed, so a second store needs its own registry or a label
// (prometheus.WrapRegistererWith).
func NewStoreCollector(v StoreView) prometheus.Collector {
	return storeCollector{v: v}
}

// Describe sends the descriptors of every metric Collect may send.
func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- roleDesc
	ch <- corruptDesc
	for _, g := range statusGauges {
		ch <- g.desc
	}
}

// Collect reads the role, the damage and the owner's status.
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	role := c.v.Role()
	for _, r := range Roles {
		ch <- gauge(roleDesc, boolValue(r == role), string(r))
	}
	ch <- gauge(corruptDesc, boolValue(c.v.Damage != nil && c.v.Damage() != nil))

	ctx, cancel := context.WithTimeout(context.Background(), StatusTimeout)
	defer cancel()
	st, err := c.v.Status(ctx)
	for _, g := range statusGauges {
		if err != nil {
			ch <- prometheus.NewInvalidMetric(g.desc, err)
		} else {
			ch <- gauge(g.desc, g.value(st))
		}
	}
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
