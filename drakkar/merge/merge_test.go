// Specs of a merge of sealed recorder files: the output's schema, rows,
// worker mapping, ordering, cluster, file properties and failure paths.

package merge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/merge"
	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Merge of sealed recorder files", func() {
	var dir, out string
	var srcs []string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		out = filepath.Join(dir, "merged-2026-10-13__09_00_00-0123456789abcdef.db")
		srcs = []string{
			buildRecorder(dir, rec{name: "w1-2026-10-13__08_00_00.db", worker: "w1", cluster: "search", events: 50, states: 3}),
			buildRecorder(dir, rec{name: "w2-2026-10-13__08_00_00.db", worker: "w2", cluster: "search", events: 30, states: 2}),
			buildRecorder(dir, rec{name: "w3-2026-10-13__08_00_00.db", events: 20, states: 1}),
		}
	})

	It("leaves exactly the merged format's sqlite_master", func() {
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		want, err := os.ReadFile("../dbfiles/testdata/sqlite_master_merged.sql")
		Expect(err).NotTo(HaveOccurred())
		Expect(renderMaster(openRO(out))).To(Equal(string(want)))
	})

	It("copies every row and reports the counts per source and in total", func() {
		res, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Out).To(Equal(out))
		Expect(res.Sources).To(HaveLen(3))
		for i, want := range [][3]int64{{1, 50, 3}, {1, 30, 2}, {1, 20, 1}} {
			s := res.Sources[i]
			Expect(s.Path).To(Equal(srcs[i]))
			Expect(s.Status).To(Equal(merge.StatusMerged))
			Expect(s.Err).NotTo(HaveOccurred())
			Expect(s.Kind).To(Equal(merge.KindRecorder))
			Expect([3]int64{s.Workers, s.Events, s.States}).To(Equal(want))
		}
		Expect([3]int64{res.Workers, res.Events, res.States}).To(Equal([3]int64{3, 100, 6}))
		Expect(res.Merged()).To(Equal(srcs))
		db := openRO(out)
		Expect(queryInt(db, "SELECT count(*) FROM events")).To(Equal(int64(100)))
		Expect(queryInt(db, "SELECT count(*) FROM worker_states")).To(Equal(int64(6)))
	})

	It("points each event and state at the worker row of its own source file", func() {
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		db := openRO(out)
		Expect(queryStrings(db, "SELECT worker_name || ' ' || source_file || ' ' || coalesce(cluster_name, '-') FROM workers ORDER BY id")).To(Equal([]string{
			"w1 w1-2026-10-13__08_00_00.db search",
			"w2 w2-2026-10-13__08_00_00.db search",
			"w3-2026-10-13__08_00_00 w3-2026-10-13__08_00_00.db -",
		}))
		// task_id is "<source file>/t<i>": each event's worker row names
		// the file it came from.
		Expect(queryInt(db, `SELECT count(*) FROM events e JOIN workers w ON w.id = e.worker_id
			WHERE e.task_id NOT LIKE w.source_file || '/t%'`)).To(BeZero())
		Expect(queryStrings(db, "SELECT w.worker_name || ':' || count(*) FROM worker_states s JOIN workers w ON w.id = s.worker_id GROUP BY w.id ORDER BY w.id")).
			To(Equal([]string{"w1:3", "w2:2", "w3-2026-10-13__08_00_00:1"}))
	})

	It("gives a source without worker_config a placeholder row named after the file, all else NULL", func() {
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		db := openRO(out)
		Expect(queryInt(db, `SELECT count(*) FROM workers WHERE worker_name = 'w3-2026-10-13__08_00_00'
			AND source_file = 'w3-2026-10-13__08_00_00.db' AND cluster_name IS NULL AND ip_address IS NULL
			AND debug_port IS NULL AND max_executors IS NULL AND created_at IS NULL AND created_at_dt IS NULL`)).To(Equal(int64(1)))
		Expect(queryStrings(db, "SELECT ip_address || ':' || debug_port FROM workers WHERE worker_name = 'w1'")).To(Equal([]string{"10.0.0.7:8080"}))
	})

	It("copies each source's events in ts order and its states in updated_at order", func() {
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		db := openRO(out)
		for w := int64(1); w <= 3; w++ {
			ts := queryStrings(db, "SELECT printf('%020.6f', ts) FROM events WHERE worker_id = ? ORDER BY id", w)
			Expect(ts).NotTo(BeEmpty())
			Expect(sort.StringsAreSorted(ts)).To(BeTrue(), "worker %d", w)
			up := queryStrings(db, "SELECT printf('%020.6f', updated_at) FROM worker_states WHERE worker_id = ? ORDER BY id", w)
			Expect(up).NotTo(BeEmpty())
			Expect(sort.StringsAreSorted(up)).To(BeTrue(), "worker %d", w)
		}
		// The sources hold them the other way round (newest first).
		src := openRO(srcs[0])
		ts := queryStrings(src, "SELECT printf('%020.6f', ts) FROM events ORDER BY id")
		Expect(sort.StringsAreSorted(ts)).To(BeFalse())
	})

	DescribeTable("inherits a cluster only when every source names the same non-empty one",
		func(clusters []string, want string) {
			var paths []string
			for i, c := range clusters {
				r := rec{name: "c" + string(rune('a'+i)) + "-2026-10-13__08_00_00.db", worker: "c" + string(rune('a'+i)), cluster: c, events: 2}
				if c == "<none>" {
					r.worker, r.cluster = "", ""
				}
				paths = append(paths, buildRecorder(dir, r))
			}
			res, err := merge.Merge(context.Background(), out, paths, merge.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Cluster).To(Equal(want))
		},
		Entry("all the same", []string{"search", "search", "search"}, "search"),
		Entry("two clusters", []string{"search", "ingest", "search"}, ""),
		Entry("one source names no cluster", []string{"search", "", "search"}, ""),
		Entry("one source has no worker_config", []string{"search", "<none>"}, ""),
		Entry("a single source", []string{"ingest"}, "ingest"),
	)

	It("writes a 0600 file with a rollback journal in its header and nothing beside it", func() {
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		fi, err := os.Stat(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		b, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(b[18:20]).To(Equal([]byte{1, 1}))
		Expect(names(dir)).To(ConsistOf(append([]string{filepath.Base(out)}, baseNames(srcs)...)))
		db := openRO(out)
		Expect(queryStrings(db, "PRAGMA integrity_check")).To(Equal([]string{"ok"}))
		Expect(queryStrings(db, "SELECT \"table\" FROM pragma_foreign_key_check")).To(BeEmpty())
		Expect(queryStrings(db, "PRAGMA journal_mode")).To(Equal([]string{"delete"}))
	})

	It("reads its sources with immutable=1: their bytes and times do not change", func() {
		before := make([]fileState, len(srcs))
		for i, p := range srcs {
			before[i] = stateOf(p)
		}
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		for i, p := range srcs {
			Expect(stateOf(p)).To(Equal(before[i]))
		}
	})

	It("refuses an output that exists and leaves it as it was", func() {
		Expect(os.WriteFile(out, []byte("keep"), 0o600)).To(Succeed())
		_, err := merge.Merge(context.Background(), out, srcs, merge.Options{})
		Expect(err).To(MatchError(merge.ErrOutputExists))
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		Expect(os.ReadFile(out)).To(Equal([]byte("keep")))
	})

	DescribeTable("refuses bad arguments and writes nothing",
		func(out func(dir string) string, sources func([]string) []string, want error) {
			o := out(dir)
			_, err := merge.Merge(context.Background(), o, sources(srcs), merge.Options{})
			Expect(err).To(MatchError(want))
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(names(dir)).To(ConsistOf(baseNames(srcs)))
		},
		Entry("no sources", func(d string) string { return filepath.Join(d, "m.db") }, func([]string) []string { return nil }, merge.ErrNoSources),
		Entry("an empty output path", func(string) string { return "" }, func(s []string) []string { return s }, merge.ErrBadPath),
		Entry("a folder as output", func(d string) string { return d }, func(s []string) []string { return s }, merge.ErrOutputExists),
	)

	It("leaves no output and no temp file when the context ends after the first source", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var seen []string
		res, err := merge.Merge(ctx, out, srcs, merge.Options{OnSource: func(s merge.SourceResult) {
			seen = append(seen, s.Status)
			cancel()
		}})
		Expect(err).To(MatchError(context.Canceled))
		Expect(seen).To(Equal([]string{merge.StatusMerged}))
		Expect(res.Sources).To(HaveLen(1))
		Expect(names(dir)).To(ConsistOf(baseNames(srcs)))
	})

	It("leaves no output and no temp file when the context has already ended", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := merge.Merge(ctx, out, srcs, merge.Options{})
		Expect(err).To(MatchError(context.Canceled))
		Expect(names(dir)).To(ConsistOf(baseNames(srcs)))
	})

	It("fails, reading no source, when the output's folder is missing", func() {
		var seen int
		missing := filepath.Join(dir, "merged", "m.db")
		_, err := merge.Merge(context.Background(), missing, srcs, merge.Options{OnSource: func(merge.SourceResult) { seen++ }})
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(seen).To(BeZero())
		Expect(names(dir)).To(ConsistOf(baseNames(srcs)))
	})

	It("does not overwrite a file that appeared at the output's name during the merge", func() {
		res, err := merge.Merge(context.Background(), out, srcs, merge.Options{OnSource: func(s merge.SourceResult) {
			if s.Path == srcs[2] {
				Expect(os.WriteFile(out, []byte("theirs"), 0o600)).To(Succeed())
			}
		}})
		Expect(err).To(MatchError(merge.ErrOutputExists))
		Expect(res.Sources).To(HaveLen(3))
		Expect(os.ReadFile(out)).To(Equal([]byte("theirs")))
		Expect(names(dir)).To(ConsistOf(append([]string{filepath.Base(out)}, baseNames(srcs)...)))
	})
})

// baseNames is the base name of each path.
func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}
