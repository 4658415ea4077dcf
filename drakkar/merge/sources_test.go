// Specs of the sources a merge meets: unreadable and corrupt files, merge
// results (two levels), older schemas, and WAL-header archives.

package merge_test

import (
	"context"
	"database/sql"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/merge"
)

var _ = Describe("Merge sources", func() {
	var dir string
	var good []string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		good = []string{
			buildRecorder(dir, rec{name: "a-2026-10-13__08_00_00.db", worker: "a", cluster: "search", events: 40, states: 2}),
			buildRecorder(dir, rec{name: "b-2026-10-13__08_00_00.db", worker: "b", cluster: "search", events: 25, states: 1}),
		}
	})

	// mergeTo merges into a new file of dir and expects success.
	mergeTo := func(name string, sources ...string) (string, merge.Result) {
		out := filepath.Join(dir, name)
		res, err := merge.Merge(context.Background(), out, sources, merge.Options{})
		Expect(err).NotTo(HaveOccurred())
		return out, res
	}

	DescribeTable("skips and reports a source it cannot read, and merges the others",
		func(make func(dir string) string, cause error) {
			bad := make(dir)
			sources := []string{good[0], bad, good[1]}
			out, res := mergeTo("m.db", sources...)
			Expect(res.Sources).To(HaveLen(3))
			Expect(res.Sources[1].Path).To(Equal(bad))
			Expect(res.Sources[1].Status).To(Equal(merge.StatusSkipped))
			Expect(res.Sources[1].Err).To(MatchError(merge.ErrUnreadable))
			Expect(res.Sources[1].Err).To(MatchError(cause))
			Expect([3]int64{res.Sources[1].Workers, res.Sources[1].Events, res.Sources[1].States}).To(BeZero())
			Expect(res.Merged()).To(Equal(good))
			Expect(res.Events).To(Equal(int64(65)))
			Expect(queryInt(openRO(out), "SELECT count(*) FROM events")).To(Equal(int64(65)))
			Expect(queryStrings(openRO(out), "SELECT worker_name FROM workers ORDER BY id")).To(Equal([]string{"a", "b"}))
		},
		Entry("garbage bytes", func(d string) string {
			p := filepath.Join(d, "junk-2026-10-13__08_00_00.db")
			Expect(os.WriteFile(p, []byte("this is not a database, not even close; it is just some text.............................................."), 0o600)).To(Succeed())
			return p
		}, merge.ErrNotSQLite),
		Entry("an empty file", func(d string) string {
			p := filepath.Join(d, "empty-2026-10-13__08_00_00.db")
			Expect(os.WriteFile(p, nil, 0o600)).To(Succeed())
			return p
		}, merge.ErrNotSQLite),
		Entry("a missing file", func(d string) string { return filepath.Join(d, "gone-2026-10-13__08_00_00.db") }, fs.ErrNotExist),
		Entry("a folder", func(d string) string {
			p := filepath.Join(d, "dir.db")
			Expect(os.Mkdir(p, 0o700)).To(Succeed())
			return p
		}, merge.ErrNotSQLite),
		Entry("a SQLite file of another kind", func(d string) string {
			p := filepath.Join(d, "other.db")
			db, err := sql.Open("sqlite", p)
			Expect(err).NotTo(HaveOccurred())
			defer db.Close()
			_, err = db.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x')")
			Expect(err).NotTo(HaveOccurred())
			return p
		}, merge.ErrUnknownFormat),
		Entry("the same file a second time", func(d string) string { return filepath.Join(d, ".", filepath.Base(good[0])) }, merge.ErrDuplicateSource),
	)

	It("writes nothing when no source can be read", func() {
		out := filepath.Join(dir, "m.db")
		missing := filepath.Join(dir, "gone.db")
		res, err := merge.Merge(context.Background(), out, []string{missing}, merge.Options{})
		Expect(err).To(MatchError(merge.ErrNothingMerged))
		Expect(res.Sources).To(HaveLen(1))
		Expect(res.Sources[0].Err).To(MatchError(fs.ErrNotExist))
		Expect(names(dir)).To(ConsistOf(baseNames(good)))
	})

	DescribeTable("never panics on a corrupt SQLite file, keeps the others and reports what it kept of it",
		func(corrupt func(path string), allowed ...string) {
			bad := buildRecorder(dir, rec{name: "c-2026-10-13__08_00_00.db", worker: "c", events: 3000, states: 2})
			corrupt(bad)
			out, res := mergeTo("m.db", good[0], bad, good[1])
			Expect(res.Sources[0].Status).To(Equal(merge.StatusMerged))
			Expect(res.Sources[2].Status).To(Equal(merge.StatusMerged))
			c := res.Sources[1]
			Expect(c.Status).To(BeElementOf(allowed))
			db := openRO(out)
			Expect(res.Events).To(Equal(int64(65) + c.Events))
			Expect(queryInt(db, "SELECT count(*) FROM events")).To(Equal(res.Events))
			Expect(queryInt(db, "SELECT count(*) FROM events e JOIN workers w ON w.id = e.worker_id WHERE w.worker_name = 'c'")).To(Equal(c.Events))
			switch c.Status {
			case merge.StatusSkipped:
				Expect(c.Err).To(MatchError(merge.ErrUnreadable))
				Expect(queryInt(db, "SELECT count(*) FROM workers WHERE worker_name = 'c'")).To(BeZero())
			case merge.StatusPartial:
				Expect(c.Err).To(MatchError(merge.ErrUnreadable))
				Expect(c.Events + c.States).To(BeNumerically(">", 0))
				Expect(c.Events).To(BeNumerically("<", 3000))
				ts := queryStrings(db, "SELECT printf('%020.6f', e.ts) FROM events e JOIN workers w ON w.id = e.worker_id WHERE w.worker_name = 'c' ORDER BY e.id")
				Expect(sort.StringsAreSorted(ts)).To(BeTrue())
			case merge.StatusMerged:
				// A damaged page SQLite never reads leaves the source
				// readable: then all of it is merged.
				Expect(c.Err).NotTo(HaveOccurred())
			}
		},
		Entry("truncated to half its size", func(p string) {
			fi, err := os.Stat(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.Truncate(p, fi.Size()/2)).To(Succeed())
		}, merge.StatusSkipped, merge.StatusPartial),
		Entry("a page of the events table overwritten with random bytes", func(p string) {
			overwritePage(p, func(pages int) int { return pages / 4 }, 7)
		}, merge.StatusPartial),
		Entry("a random page overwritten with random bytes (seed 1)", func(p string) {
			overwritePage(p, func(pages int) int { return 2 + rand.New(rand.NewPCG(1, 1)).IntN(pages-2) }, 1)
		}, merge.StatusMerged, merge.StatusPartial, merge.StatusSkipped),
		Entry("a random page overwritten with random bytes (seed 2)", func(p string) {
			overwritePage(p, func(pages int) int { return 2 + rand.New(rand.NewPCG(2, 2)).IntN(pages-2) }, 2)
		}, merge.StatusMerged, merge.StatusPartial, merge.StatusSkipped),
		Entry("the first page's body overwritten", func(p string) {
			b, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			r := rand.New(rand.NewPCG(3, 3))
			for i := 100; i < 4096 && i < len(b); i++ {
				b[i] = byte(r.UintN(256))
			}
			Expect(os.WriteFile(p, b, 0o600)).To(Succeed())
		}, merge.StatusSkipped),
	)

	It("skips a source that fails part-way whole with AllOrNothing", func() {
		bad := buildRecorder(dir, rec{name: "c-2026-10-13__08_00_00.db", worker: "c", events: 3000, states: 2})
		overwritePage(bad, func(pages int) int { return pages / 4 }, 7)
		out := filepath.Join(dir, "m.db")
		res, err := merge.Merge(context.Background(), out, []string{good[0], bad}, merge.Options{AllOrNothing: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Sources[1].Status).To(Equal(merge.StatusSkipped))
		Expect(res.Sources[1].Err).To(MatchError(merge.ErrUnreadable))
		Expect(queryStrings(openRO(out), "SELECT worker_name FROM workers")).To(Equal([]string{"a"}))
		Expect(res.Events).To(Equal(int64(40)))
	})

	It("keeps the rows before a row the merged format refuses, in ts order, and reports the source partial", func() {
		p := buildLoose(dir)
		out, res := mergeTo("m.db", p, good[0])
		loose := res.Sources[0]
		Expect(loose.Status).To(Equal(merge.StatusPartial))
		Expect(loose.Err).To(MatchError(merge.ErrUnreadable))
		Expect(loose.Err.Error()).To(ContainSubstring("NOT NULL"))
		Expect([3]int64{loose.Workers, loose.Events, loose.States}).To(Equal([3]int64{1, 5, 0}))
		Expect(res.Merged()).To(Equal([]string{good[0]}))
		Expect(queryStrings(openRO(out), "SELECT task_id FROM events WHERE worker_id = 1 ORDER BY id")).To(Equal([]string{"t1", "t2", "t3", "t4", "t5"}))
	})

	It("writes the output when its only readable rows come from a partial source", func() {
		out, res := mergeTo("m.db", buildLoose(dir), filepath.Join(dir, "gone.db"))
		Expect(res.Sources[0].Status).To(Equal(merge.StatusPartial))
		Expect(res.Sources[1].Status).To(Equal(merge.StatusSkipped))
		Expect(res.Merged()).To(BeEmpty())
		Expect(queryInt(openRO(out), "SELECT count(*) FROM events")).To(Equal(int64(5)))
	})

	It("keeps every event once, with its own worker, through a merge of merge results", func() {
		c := buildRecorder(dir, rec{name: "c-2026-10-13__08_00_00.db", events: 15, states: 1})
		d := buildRecorder(dir, rec{name: "d-2026-10-13__08_00_00.db", worker: "d", cluster: "search", events: 10, states: 3})
		e := buildRecorder(dir, rec{name: "e-2026-10-13__08_00_00.db", worker: "e", cluster: "search", events: 5})
		m1, _ := mergeTo("m1.db", good[0], c)
		m2, _ := mergeTo("m2.db", good[1], d)
		top, res := mergeTo("top.db", m1, m2, e)
		Expect(res.Sources[0].Kind).To(Equal(merge.KindMerged))
		Expect(res.Sources[0].Workers).To(Equal(int64(2)))
		Expect(res.Sources[2].Kind).To(Equal(merge.KindRecorder))
		Expect([3]int64{res.Workers, res.Events, res.States}).To(Equal([3]int64{5, 95, 7}))
		db := openRO(top)
		Expect(queryStrings(db, "SELECT worker_name || ' ' || source_file FROM workers ORDER BY id")).To(Equal([]string{
			"a a-2026-10-13__08_00_00.db",
			"c-2026-10-13__08_00_00 c-2026-10-13__08_00_00.db",
			"b b-2026-10-13__08_00_00.db",
			"d d-2026-10-13__08_00_00.db",
			"e e-2026-10-13__08_00_00.db",
		}))
		// Every event once: task ids are unique per file, and each names
		// the file of its worker row.
		Expect(queryInt(db, "SELECT count(DISTINCT task_id) FROM events")).To(Equal(int64(95)))
		Expect(queryInt(db, `SELECT count(*) FROM events ev JOIN workers w ON w.id = ev.worker_id
			WHERE ev.task_id NOT LIKE w.source_file || '/t%'`)).To(BeZero())
		Expect(queryStrings(db, "SELECT w.worker_name || ':' || count(*) FROM worker_states s JOIN workers w ON w.id = s.worker_id GROUP BY w.id ORDER BY w.id")).
			To(Equal([]string{"a:2", "c-2026-10-13__08_00_00:1", "b:1", "d:3"}))
		// The placeholder row of c breaks the common cluster.
		Expect(res.Cluster).To(BeEmpty())
	})

	It("inherits the cluster of merged sources whose workers all name it", func() {
		m1, _ := mergeTo("m1.db", good[0])
		_, res := mergeTo("top.db", m1, good[1])
		Expect(res.Cluster).To(Equal("search"))
	})

	It("reads the columns an older recorder file lacks as NULL", func() {
		old := buildRecorder(dir, rec{name: "old-2026-10-13__08_00_00.db", worker: "old", events: 12, states: 2, oldDDL: true})
		out, res := mergeTo("m.db", good[0], old)
		Expect(res.Sources[1].Status).To(Equal(merge.StatusMerged))
		Expect(res.Sources[1].Events).To(Equal(int64(12)))
		db := openRO(out)
		Expect(queryInt(db, `SELECT count(*) FROM events e JOIN workers w ON w.id = e.worker_id
			WHERE w.worker_name = 'old' AND origin IS NULL AND client_name IS NULL AND request_id IS NULL`)).To(Equal(int64(12)))
		Expect(queryInt(db, `SELECT count(*) FROM worker_states s JOIN workers w ON w.id = s.worker_id
			WHERE w.worker_name = 'old' AND health_state IS NULL AND loop_lag_ms IS NULL AND throughput IS NULL`)).To(Equal(int64(2)))
		// The current file's values are kept.
		Expect(queryInt(db, `SELECT count(*) FROM events e JOIN workers w ON w.id = e.worker_id
			WHERE w.worker_name = 'a' AND origin IN ('kafka', 'http')`)).To(Equal(int64(40)))
	})

	It("reads a WAL-header merged file through a private copy, leaving no -wal or -shm beside it", func() {
		m1, _ := mergeTo("m1.db", good[0])
		toWALHeader(m1)
		before := stateOf(m1)
		out, res := mergeTo("top.db", m1, good[1])
		Expect(res.Sources[0].Status).To(Equal(merge.StatusMerged))
		Expect(res.Sources[0].Kind).To(Equal(merge.KindMerged))
		Expect(res.Sources[0].Events).To(Equal(int64(40)))
		Expect(queryInt(openRO(out), "SELECT count(*) FROM events")).To(Equal(int64(65)))
		Expect(stateOf(m1)).To(Equal(before))
		Expect(names(dir)).To(ConsistOf(append([]string{"m1.db", "top.db"}, baseNames(good)...)))
	})

	It("reads the commits of a -wal left beside a WAL-header source, touching neither file", func() {
		m1, _ := mergeTo("m1.db", good[0])
		py := filepath.Join(dir, "py.db")
		// Snapshot a file and its -wal while a writer holds them open, so
		// that the -wal holds five committed events the file does not.
		db, err := sql.Open("sqlite", m1)
		Expect(err).NotTo(HaveOccurred())
		db.SetMaxOpenConns(1)
		for _, q := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
			"INSERT INTO events (worker_id, ts, dt, event, task_id) SELECT worker_id, ts + 3600, dt, event, task_id || 'x' FROM events LIMIT 5"} {
			_, err := db.Exec(q)
			Expect(err).NotTo(HaveOccurred(), q)
		}
		copyTo(m1, py)
		copyTo(m1+"-wal", py+"-wal")
		Expect(db.Close()).To(Succeed())
		before, beforeWAL := stateOf(py), stateOf(py+"-wal")

		out, res := mergeTo("top.db", py, good[1])
		Expect(res.Sources[0].Status).To(Equal(merge.StatusMerged))
		Expect(res.Sources[0].Events).To(Equal(int64(45)))
		Expect(queryInt(openRO(out), "SELECT count(*) FROM events WHERE task_id LIKE '%x'")).To(Equal(int64(5)))
		Expect(stateOf(py)).To(Equal(before))
		Expect(stateOf(py + "-wal")).To(Equal(beforeWAL))
		Expect(py + "-shm").NotTo(BeAnExistingFile())
	})

	It("puts the private copy in Options.TempDir and removes it", func() {
		m1, _ := mergeTo("m1.db", good[0])
		toWALHeader(m1)
		tmp := GinkgoT().TempDir()
		var during []string
		out := filepath.Join(dir, "top.db")
		_, err := merge.Merge(context.Background(), out, []string{good[1], m1}, merge.Options{TempDir: tmp,
			OnSource: func(merge.SourceResult) { during = append(during, names(tmp)...) }})
		Expect(err).NotTo(HaveOccurred())
		Expect(during).To(BeEmpty())
		Expect(names(tmp)).To(BeEmpty())
	})
})

// toWALHeader switches a file's header to WAL (bytes 18 and 19 = 2), as
// drakkar's Python merge leaves its archives, and removes the sidecars the
// switch made.
func toWALHeader(path string) {
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	var mode string
	Expect(db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode)).To(Succeed())
	Expect(mode).To(Equal("wal"))
	Expect(db.Close()).To(Succeed())
	for _, s := range []string{"-wal", "-shm"} {
		_ = os.Remove(path + s)
	}
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(b[18:20]).To(Equal([]byte{2, 2}))
}

// overwritePage overwrites one page of a SQLite file (1-based, chosen by
// pick from the page count) with bytes from a seeded generator.
func overwritePage(path string, pick func(pages int) int, seed uint64) {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	size := int(b[16])<<8 | int(b[17])
	if size == 1 {
		size = 65536
	}
	pages := len(b) / size
	Expect(pages).To(BeNumerically(">", 4))
	p := pick(pages)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := (p - 1) * size; i < p*size; i++ {
		b[i] = byte(r.UintN(256))
	}
	Expect(os.WriteFile(path, b, 0o600)).To(Succeed())
}

// copyTo copies the file src to dst.
func copyTo(src, dst string) {
	b, err := os.ReadFile(src)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(dst, b, 0o600)).To(Succeed())
}

// buildLoose writes a recorder file whose events table has no NOT NULL on
// event, with ten events (ts 1 to 10, inserted newest first) of which the
// sixth by ts has a NULL event, and returns its path.
func buildLoose(dir string) string {
	p := filepath.Join(dir, "loose-2026-10-13__08_00_00.db")
	db, err := sql.Open("sqlite", p)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, dt TEXT NOT NULL, event TEXT, task_id TEXT)",
		"INSERT INTO events (ts, dt, event, task_id) VALUES (6, 'x', NULL, 'six')",
		"INSERT INTO events (ts, dt, event, task_id) WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i - 1 FROM n WHERE i > 1) SELECT i, 'x', 'e', 't' || i FROM n WHERE i <> 6",
	} {
		_, err := db.Exec(q)
		Expect(err).NotTo(HaveOccurred(), q)
	}
	return p
}
