// Specs of the window math: windows in UTC epoch seconds keyed by a
// file's start time, due at the exact second, names.

package archive_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
)

var _ = Describe("Windows", func() {
	utc := func(s string) time.Time {
		t, err := time.Parse("2006-01-02 15:04:05", s)
		Expect(err).NotTo(HaveOccurred())
		return t
	}

	DescribeTable("a time falls in [k·W, (k+1)·W)",
		func(t string, w time.Duration, from, to string) {
			win := archive.WindowOf(utc(t), w)
			Expect(win.From).To(Equal(utc(from)))
			Expect(win.To).To(Equal(utc(to)))
		},
		Entry("a day, mid-day", "2026-10-13 08:00:00", 24*time.Hour, "2026-10-13 00:00:00", "2026-10-14 00:00:00"),
		Entry("a day, its first second", "2026-10-13 00:00:00", 24*time.Hour, "2026-10-13 00:00:00", "2026-10-14 00:00:00"),
		Entry("a day, its last second", "2026-10-13 23:59:59", 24*time.Hour, "2026-10-13 00:00:00", "2026-10-14 00:00:00"),
		Entry("a multi-day window (3 days from the epoch)", "2026-10-12 08:00:00", 72*time.Hour, "2026-10-10 00:00:00", "2026-10-13 00:00:00"),
		Entry("an hour", "2026-10-13 08:59:59", time.Hour, "2026-10-13 08:00:00", "2026-10-13 09:00:00"),
		Entry("90 minutes (not a divisor of a day)", "2026-10-13 01:00:00", 90*time.Minute, "2026-10-13 00:00:00", "2026-10-13 01:30:00"),
		Entry("before 1970", "1969-12-31 23:00:00", 24*time.Hour, "1969-12-31 00:00:00", "1970-01-01 00:00:00"),
	)

	It("is due at the exact second its due delay ends, not a second before", func() {
		win := archive.WindowOf(utc("2026-10-13 08:00:00"), 24*time.Hour)
		Expect(win.Due(utc("2026-10-15 23:59:59"), 48*time.Hour)).To(BeFalse())
		Expect(win.Due(utc("2026-10-16 00:00:00"), 48*time.Hour)).To(BeTrue())
		Expect(win.Due(utc("2026-10-16 00:00:00").Add(-time.Nanosecond), 48*time.Hour)).To(BeFalse())
	})

	It("names the archive with minute resolution and the sanitized cluster", func() {
		win := archive.WindowOf(utc("2026-10-12 08:00:00"), 24*time.Hour)
		Expect(win.ArchiveName("search")).To(Equal("search-2026-10-12_00-00__2026-10-13_00-00.db.gz"))
		Expect(win.ArchiveName("a/b c")).To(Equal("a_b_c-2026-10-12_00-00__2026-10-13_00-00.db.gz"))
	})

	DescribeTable("a sealed file's start time comes from its name",
		func(name string, ok bool, want string) {
			t, got := archive.FileStart(name)
			Expect(got).To(Equal(ok))
			if ok {
				Expect(t).To(Equal(utc(want)))
			}
		},
		Entry("a plain worker", "w1-2026-10-13__08_00_00.db", true, "2026-10-13 08:00:00"),
		Entry("a dashed worker name", "search-worker-3-2026-10-13__23_59_59.db", true, "2026-10-13 23:59:59"),
		Entry("a worker named like a date", "2026-10-12__00_00_00-2026-10-13__08_00_00.db", true, "2026-10-13 08:00:00"),
		Entry("an impossible date", "w1-2026-02-30__08_00_00.db", false, ""),
		Entry("an impossible hour", "w1-2026-10-13__24_00_00.db", false, ""),
		Entry("no worker name", "-2026-10-13__08_00_00.db", false, ""),
		Entry("a dot-prefixed work file", ".w1-2026-10-13__08_00_00.db", false, ""),
		Entry("a meta file", "w1-2026-10-13__08_00_00.db.meta.json", false, ""),
		Entry("a set-aside file", "w1-2026-10-13__08_00_00.db.unreadable", false, ""),
		Entry("an archive", "c1-2026-10-12_00-00__2026-10-13_00-00.db.gz", false, ""),
		Entry("the cache file", "w1-cache.db", false, ""),
	)
})
