// Specs of the file names: recorder files, archives, merge results and the
// small fixed names.

package dbfiles_test

import (
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

var _ = Describe("File names", func() {
	t0 := time.Date(2026, 10, 13, 8, 0, 5, 999_000_000, time.UTC)

	DescribeTable("SanitizeCluster keeps [a-zA-Z0-9_-] and turns every other character into _",
		func(in, want string) { Expect(dbfiles.SanitizeCluster(in)).To(Equal(want)) },
		Entry("a plain name", "search", "search"),
		Entry("a space", "search hot", "search_hot"),
		Entry("the empty name", "", "default"),
		Entry("dots and slashes", "../a/b.c", "___a_b_c"),
		Entry("a non-ASCII letter is one _", "réseau", "r_seau"),
		Entry("dash, underscore and digits", "A-z_09", "A-z_09"),
	)

	It("names a recorder file with its UTC start time to the second", func() {
		local := t0.In(time.FixedZone("X", 2*3600))
		Expect(dbfiles.RecorderFileName("search-worker-3", local)).To(Equal("search-worker-3-2026-10-13__08_00_05.db"))
	})

	DescribeTable("ParseRecorderFileName matches only this worker's exact names",
		func(worker, name string, want bool) {
			got, ok := dbfiles.ParseRecorderFileName(worker, name)
			Expect(ok).To(Equal(want))
			if want {
				Expect(dbfiles.RecorderFileName(worker, got)).To(Equal(name))
			} else {
				Expect(got.IsZero()).To(BeTrue())
			}
		},
		Entry("its own file", "a", "a-2026-10-13__08_00_05.db", true),
		Entry("worker a never matches a file of worker a-b", "a", "a-b-2026-10-13__08_00_05.db", false),
		Entry("worker a-b matches its own", "a-b", "a-b-2026-10-13__08_00_05.db", true),
		Entry("a worker whose name ends in a timestamp owns the longer name", "a-2026-10-13__08_00_05", "a-2026-10-13__08_00_05-2026-10-14__00_00_00.db", true),
		Entry("which worker a does not match", "a", "a-2026-10-13__08_00_05-2026-10-14__00_00_00.db", false),
		Entry("the cache file", "a", "a-cache.db", false),
		Entry("a WAL", "a", "a-2026-10-13__08_00_05.db-wal", false),
		Entry("a meta file", "a", "a-2026-10-13__08_00_05.db.meta.json", false),
		Entry("a month 13", "a", "a-2026-13-13__08_00_05.db", false),
		Entry("hour 24", "a", "a-2026-10-13__24_00_05.db", false),
		Entry("February 30", "a", "a-2026-02-30__08_00_05.db", false),
		Entry("a missing digit", "a", "a-2026-10-13__08_00_5.db", false),
		Entry("a dot-prefixed work file", "a", ".a-2026-10-13__08_00_05.db", false),
		Entry("the empty worker", "", "-2026-10-13__08_00_05.db", false),
		Entry("another separator", "a", "a_2026-10-13__08_00_05.db", false),
	)

	It("names the other own files and the meta file", func() {
		Expect(dbfiles.CacheFileName("w1")).To(Equal("w1-cache.db"))
		Expect(dbfiles.WatchdogFileName("w1")).To(Equal("w1.watchdog"))
		Expect(dbfiles.MetaFileName("w1-2026-10-13__08_00_05.db")).To(Equal("w1-2026-10-13__08_00_05.db.meta.json"))
		Expect(dbfiles.WALFileName("w1-2026-10-13__08_00_05.db")).To(Equal("w1-2026-10-13__08_00_05.db-wal"))
		Expect(dbfiles.ArchiveLockName).To(Equal(".archive.lock"))
	})

	It("places a cluster's history folder under its sanitized name", func() {
		Expect(dbfiles.HistoryDir("/mnt/fleet", "search hot")).To(Equal(filepath.FromSlash("/mnt/fleet/history/search_hot")))
		Expect(dbfiles.HistoryDir("/mnt/fleet", "")).To(Equal(filepath.FromSlash("/mnt/fleet/history/default")))
		Expect(dbfiles.MergedDir("/mnt/fleet")).To(Equal(filepath.FromSlash("/mnt/fleet/merged")))
	})

	It("names an archive as the spec's example and parses it back", func() {
		from := time.Date(2026, 10, 12, 0, 0, 0, 0, time.UTC)
		to := from.Add(24 * time.Hour)
		name := dbfiles.ArchiveName("search", from, to)
		Expect(name).To(Equal("search-2026-10-12_00-00__2026-10-13_00-00.db.gz"))
		cluster, f, t, ok := dbfiles.ParseArchiveName(name)
		Expect(ok).To(BeTrue())
		Expect(cluster).To(Equal("search"))
		Expect(f).To(Equal(from))
		Expect(t).To(Equal(to))
	})

	DescribeTable("ParseArchiveName refuses what ArchiveName never writes",
		func(name string) {
			_, _, _, ok := dbfiles.ParseArchiveName(name)
			Expect(ok).To(BeFalse())
		},
		Entry("no cluster", "-2026-10-12_00-00__2026-10-13_00-00.db.gz"),
		Entry("an unsanitized cluster", "a b-2026-10-12_00-00__2026-10-13_00-00.db.gz"),
		Entry("an empty window", "s-2026-10-12_00-00__2026-10-12_00-00.db.gz"),
		Entry("a reversed window", "s-2026-10-13_00-00__2026-10-12_00-00.db.gz"),
		Entry("one underscore", "s-2026-10-12_00-00_-2026-10-13_00-00.db.gz"),
		Entry("not gzip", "s-2026-10-12_00-00__2026-10-13_00-00.db"),
		Entry("a sealed file", "s-2026-10-12__00_00_00.db"),
		Entry("minute 60", "s-2026-10-12_00-60__2026-10-13_00-00.db.gz"),
	)

	It("keeps a cluster with dashes whole when parsing an archive name", func() {
		cluster, _, _, ok := dbfiles.ParseArchiveName("search-hot-2026-10-12_00-00__2026-10-13_00-00.db.gz")
		Expect(ok).To(BeTrue())
		Expect(cluster).To(Equal("search-hot"))
	})

	It("caps a cluster's folder name so that the archive pass's longest file name fits in NAME_MAX", func() {
		from := time.Date(2026, 10, 12, 0, 0, 0, 0, time.UTC)
		longest := strings.Repeat("c", dbfiles.MaxClusterFolderBytes)
		Expect(len(dbfiles.ArchiveWorkName(dbfiles.ArchiveName(longest, from, from.Add(24*time.Hour)), dbfiles.NewHex16()))).
			To(Equal(dbfiles.NameMax))
		Expect(dbfiles.ClusterNameProblem(longest)).To(Succeed())
		Expect(dbfiles.ClusterNameProblem(longest + "c")).To(MatchError(ContainSubstring("193 bytes, at most 192")))
		Expect(dbfiles.ClusterNameProblem(strings.Repeat("é", 192))).To(Succeed(), "one folder byte per code point")
		Expect(dbfiles.ClusterNameProblem(strings.Repeat("é", 120))).To(Succeed())
		Expect(dbfiles.ClusterNameProblem(strings.Repeat("x", 215))).To(HaveOccurred())
		Expect(dbfiles.ClusterNameProblem("")).To(Succeed())
	})

	It("names merge results and incoming copies", func() {
		Expect(dbfiles.MergedName(t0, "0123456789abcdef")).To(Equal("merged-2026-10-13__08_00_05-0123456789abcdef.db"))
		Expect(dbfiles.IncomingName("w-2026-10-13__08_00_05.db", "0123456789abcdef")).To(Equal(".w-2026-10-13__08_00_05.db.0123456789abcdef.incoming"))
	})

	It("draws 16 lowercase hex characters, different each time", func() {
		a, b := dbfiles.NewHex16(), dbfiles.NewHex16()
		Expect(a).To(MatchRegexp(`^[0-9a-f]{16}$`))
		Expect(dbfiles.IsHex16(a)).To(BeTrue())
		Expect(a).NotTo(Equal(b))
		Expect(dbfiles.IsHex16("0123456789ABCDEF")).To(BeFalse())
		Expect(dbfiles.IsHex16("0123456789abcde")).To(BeFalse())
	})
})
