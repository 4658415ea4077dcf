// Specs of the archive configuration: defaults, --set parsing and the
// validation rules, each error naming its key.

package archive_test

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Config", func() {
	It("has the spec's defaults and validates them", func() {
		c := archive.DefaultConfig()
		Expect(c.Enabled).To(BeTrue())
		Expect(c.Window).To(Equal(24 * time.Hour))
		Expect(c.DueAfter).To(Equal(48 * time.Hour))
		Expect(c.Retention).To(Equal(30 * 24 * time.Hour))
		Expect(c.LockStale).To(Equal(7200 * time.Second))
		Expect(c.MergedRetention).To(Equal(32 * 24 * time.Hour))
		Expect(c.Validate()).To(Succeed())
	})

	It("reads fractions in the key's unit and gives them back", func() {
		c := archive.DefaultConfig()
		Expect(c.Set("history.archive.window_hours", "0.5")).To(Succeed())
		Expect(c.Set("history.archive.lock_stale_seconds", "0.25")).To(Succeed())
		Expect(c.Set("history.archive.enabled", "false")).To(Succeed())
		Expect(c.Window).To(Equal(30 * time.Minute))
		Expect(c.LockStale).To(Equal(250 * time.Millisecond))
		Expect(c.Enabled).To(BeFalse())
		v, ok := c.Get("history.archive.window_hours")
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal("0.5"))
		Expect(archive.Keys()).To(ContainElements("history.archive.retention_days", "history.merged_retention_days"))
	})

	DescribeTable("refuses a bad value with one error naming the key, leaving the config as it was",
		func(key, value, want string) {
			c := archive.DefaultConfig()
			before := c
			err := c.Set(key, value)
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(errors.Is(err, archive.ErrConfig)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
			Expect(c).To(Equal(before))
		},
		Entry("an unknown key", "history.archive.retention_hours", "1", `unknown key "history.archive.retention_hours"`),
		Entry("a bool that is not true/false", "history.archive.enabled", "yes", "history.archive.enabled: must be true or false"),
		Entry("a number that is not one", "history.archive.window_hours", "a day", "history.archive.window_hours: must be a number"),
		Entry("an infinite number", "history.archive.due_after_hours", "Inf", "history.archive.due_after_hours: must be a number"),
	)

	DescribeTable("Validate names the first bad key",
		func(set map[string]string, want string) {
			c := archive.DefaultConfig()
			for k, v := range set {
				Expect(c.Set(k, v)).To(Succeed())
			}
			err := c.Validate()
			if want == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(MatchError(archive.ErrConfig))
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("a window shorter than the rotation interval", map[string]string{"history.archive.window_hours": "0.5"},
			"history.archive.window_hours: must be at least the rotation interval (1h0m0s), got 30m0s"),
		Entry("a window of whole minutes under a short rotation", map[string]string{"history.archive.window_hours": "0.5",
			"ui.recorder.rotation_interval_hours": "0.001", "history.archive.due_after_hours": "0.001"}, ""),
		Entry("a window that is not a whole number of minutes", map[string]string{"history.archive.window_hours": "0.001",
			"ui.recorder.rotation_interval_hours": "0.001"}, "history.archive.window_hours: must be a whole number of minutes"),
		Entry("a zero window", map[string]string{"history.archive.window_hours": "0"}, "history.archive.window_hours: must be more than 0"),
		Entry("a due delay shorter than the rotation interval", map[string]string{"history.archive.due_after_hours": "0.5"},
			"history.archive.due_after_hours: must be at least the rotation interval"),
		Entry("a retention that does not cover due + window", map[string]string{"history.archive.retention_days": "2.5"},
			"history.archive.retention_days: must cover due_after_hours + window_hours (72h0m0s), got 60h0m0s"),
		Entry("a retention of exactly due + window", map[string]string{"history.archive.retention_days": "3"}, ""),
		Entry("a retention of 0 (keep forever)", map[string]string{"history.archive.retention_days": "0"}, ""),
		Entry("a negative retention", map[string]string{"history.archive.retention_days": "-1"}, "history.archive.retention_days: must not be negative"),
		Entry("a zero stale age", map[string]string{"history.archive.lock_stale_seconds": "0"}, "history.archive.lock_stale_seconds: must be more than 0"),
		Entry("a negative merged retention", map[string]string{"history.merged_retention_days": "-0.5"}, "history.merged_retention_days: must not be negative"),
		Entry("merged retention 0 (keep them)", map[string]string{"history.merged_retention_days": "0"}, ""),
	)
})
