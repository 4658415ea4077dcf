// Specs of FindLeftovers: the exact name rule, the live file, and the
// untouched rule over the file and its -wal, on a given clock.

package recorder_test

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

var _ = Describe("Finding leftovers", func() {
	var dir string
	now := time.Date(2026, 10, 13, 12, 0, 0, 0, time.UTC)
	const untouched = 300 * time.Second

	// file creates name in dir, last modified age before now.
	file := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte("x"), 0o600)).To(Succeed())
		Expect(os.Chtimes(p, now.Add(-age), now.Add(-age))).To(Succeed())
		return p
	}

	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("finds this worker's quiet files, oldest first, and nothing else", func() {
		b := file("a-2026-10-13__09_00_00.db", time.Hour)
		a := file("a-2026-10-13__08_00_00.db", 10*time.Minute)
		file("a-b-2026-10-13__07_00_00.db", time.Hour) // worker a-b
		file("b-2026-10-13__07_00_00.db", time.Hour)   // worker b
		file("a-cache.db", time.Hour)                  // the cache
		file("a.watchdog", time.Hour)                  // the watchdog
		file("a-2026-10-13__06_00_00.db.meta.json", time.Hour)
		file("a-2026-10-13__06_00_00.db-shm", time.Hour)
		file(".a-2026-10-13__06_00_00.db", time.Hour) // dot-prefixed
		file("a-2026-10-13__10_00_00.db", time.Hour)  // the live file
		Expect(os.Mkdir(filepath.Join(dir, "a-2026-10-13__05_00_00.db"), 0o700)).To(Succeed())
		got, err := recorder.FindLeftovers(dir, "a", "a-2026-10-13__10_00_00.db", now, untouched)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]string{a, b}))
	})

	It("gives worker a-b its own files and none of worker a's", func() {
		file("a-2026-10-13__08_00_00.db", time.Hour)
		ab := file("a-b-2026-10-13__07_00_00.db", time.Hour)
		got, err := recorder.FindLeftovers(dir, "a-b", "", now, untouched)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]string{ab}))
	})

	DescribeTable("counts a file as untouched only when it and its -wal are old enough",
		func(fileAge, walAge time.Duration, hasWAL, want bool) {
			p := file("a-2026-10-13__08_00_00.db", fileAge)
			if hasWAL {
				file("a-2026-10-13__08_00_00.db-wal", walAge)
			}
			got, err := recorder.FindLeftovers(dir, "a", "", now, untouched)
			Expect(err).NotTo(HaveOccurred())
			if want {
				Expect(got).To(Equal([]string{p}))
			} else {
				Expect(got).To(BeEmpty())
			}
		},
		Entry("an old file without a -wal", time.Hour, time.Duration(0), false, true),
		Entry("an old file and an old -wal", time.Hour, time.Hour, true, true),
		Entry("an old file with a fresh -wal", time.Hour, time.Second, true, false),
		Entry("a fresh file", 299*time.Second, time.Duration(0), false, false),
		Entry("exactly the untouched age", 300*time.Second, 300*time.Second, true, true),
		Entry("a file modified in the future (clock skew)", -time.Minute, time.Duration(0), false, false),
	)

	It("reports a storage folder it cannot read", func() {
		_, err := recorder.FindLeftovers(filepath.Join(dir, "missing"), "a", "", now, untouched)
		Expect(err).To(MatchError(os.ErrNotExist))
	})
})
