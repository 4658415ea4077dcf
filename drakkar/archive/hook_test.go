// Specs of AfterRotate, the recorder's hook, and the metric reader the
// specs share.

package archive_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/archive"
)

// metricValue gathers reg and returns the value of the metric name.
func metricValue(reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

var _ = Describe("AfterRotate", func() {
	It("runs a pass, and logs an unexpected error as a failed background job", func() {
		shared := GinkgoT().TempDir()
		hist := filepath.Join(shared, "history", "c1")
		buildSealed(hist, sealedName("w1", day13.Add(8*time.Hour)), 3)
		logs := &bytes.Buffer{}
		log := slog.New(slog.NewJSONHandler(logs, nil))
		hook := archive.AfterRotate(testConfig(), archive.Options{Shared: shared, Cluster: "c1", Logger: log,
			Clock: fixedClock(day13.Add(11 * time.Hour))})
		hook(context.Background())
		Expect(names(hist)).To(ConsistOf("c1-2026-10-13_08-00__2026-10-13_09-00.db.gz"))
		Expect(logs.String()).NotTo(ContainSubstring("recorder_background_job_failed"))

		broken := archive.AfterRotate(testConfig(), archive.Options{Shared: shared, Cluster: "c1", Logger: log,
			Clock: func(context.Context, string) (time.Time, error) { return time.Time{}, errors.New("the mount is gone") }})
		broken(context.Background())
		Expect(logs.String()).To(ContainSubstring(`"msg":"recorder_background_job_failed","job":"archive_pass","error":"the mount is gone"`))
	})
})
