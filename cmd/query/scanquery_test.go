// query scan's query flags through the real binary: search, filters,
// sort, paging, and export to CSV and Parquet files.

package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// taskKinds is a kind with a time column and an index to sort by.
const taskKinds = `{"kinds":[{"name":"tasks","columns":[{"name":"host","type":"string"},{"name":"tries","type":"integer"},{"name":"at","type":"datetime"}],"timeColumn":"at","indexes":[["tries"]]}]}`

// taskRows are four tasks, seqs 1 to 4.
const taskRows = `{"host":"web-1","tries":2,"at":"2026-12-01T10:00:00Z"}
{"host":"DB-1","tries":0,"at":"2026-12-01T11:00:00Z"}
{"host":"Web-2","tries":5,"at":"2026-12-01T12:00:00Z"}
{"host":"cache","tries":1}
`

var _ = Describe("query scan with query flags", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		s.ok(taskRows, "append", "--stream", "t", "--kind", "tasks")
	})

	seqsOf := func(out string) []float64 {
		var seqs []float64
		for _, l := range decodeLines(out) {
			n, err := l["_seq"].(interface{ Float64() (float64, error) }).Float64()
			Expect(err).NotTo(HaveOccurred())
			seqs = append(seqs, n)
		}
		return seqs
	}

	DescribeTable("prints the rows the flags select, in their order",
		func(want []float64, flags ...string) {
			Expect(seqsOf(s.ok("", append([]string{"scan", "--stream", "t"}, flags...)...))).To(Equal(want))
		},
		Entry("a case-insensitive search", []float64{1, 3}, "--q", "WEB"),
		Entry("two filters", []float64{1, 3}, "--where", "tries>=1", "--where", "host~w"),
		Entry("a time window", []float64{2, 3}, "--from", "2026-12-01T11:00:00Z", "--until", "2026-12-01T13:00:00Z"),
		Entry("a seq window", []float64{2, 3}, "--after", "1", "--to", "3"),
		Entry("a descending sort with a limit", []float64{3, 1}, "--sort", "-tries", "--limit", "2"),
	)

	It("prints one page and the next cursor on stderr, which the next page takes", func() {
		r := s.run("", "scan", "--stream", "t", "--sort", "tries", "--page-size", "3")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(seqsOf(r.stdout)).To(Equal([]float64{2, 4, 1}))
		cursor, ok := strings.CutPrefix(strings.TrimSpace(r.stderr), "next-cursor: ")
		Expect(ok).To(BeTrue(), r.stderr)
		r = s.run("", "scan", "--stream", "t", "--sort", "tries", "--page-size", "3", "--cursor", cursor)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(seqsOf(r.stdout)).To(Equal([]float64{3}))
		Expect(r.stderr).To(BeEmpty(), "the last page has no next cursor")
	})

	It("writes CSV to stdout", func() {
		recs, err := csv.NewReader(strings.NewReader(s.ok("", "scan", "--stream", "t", "--format", "csv", "--q", "cache"))).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(Equal([][]string{{"_seq", "host", "tries", "at"}, {"4", "cache", "1", ""}}))
	})

	It("writes CSV cells raw by default, and with --csv-guard puts a ' before text cells a spreadsheet would run, not before numbers", func() {
		s.ok(`{"host":"=HYPERLINK(\"x\")","tries":-5}
{"host":"@SUM(1)","tries":1}
{"host":"-1+2","tries":2}
`, "append", "--stream", "f", "--kind", "tasks")
		read := func(flags ...string) [][]string {
			recs, err := csv.NewReader(strings.NewReader(s.ok("", append([]string{"scan", "--stream", "f", "--format", "csv"}, flags...)...))).ReadAll()
			Expect(err).NotTo(HaveOccurred())
			return recs[1:]
		}
		Expect(read()).To(Equal([][]string{{"1", `=HYPERLINK("x")`, "-5", ""}, {"2", "@SUM(1)", "1", ""}, {"3", "-1+2", "2", ""}}))
		Expect(read("--csv-guard")).To(Equal([][]string{{"1", `'=HYPERLINK("x")`, "-5", ""}, {"2", "'@SUM(1)", "1", ""}, {"3", "'-1+2", "2", ""}}))
		r := s.run("", "scan", "--stream", "f", "--format", "csv", "--csv-guard", "--page-size", "2")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal("_seq,host,tries,at\n1,\"'=HYPERLINK(\"\"x\"\")\",-5,\n2,'@SUM(1),1,\n"), "one page is guarded too")
		r = s.run("", "scan", "--stream", "f", "--csv-guard")
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("--csv-guard applies to --format csv only"))
	})

	It("writes a Parquet file with --out, mode 0600, and no progress bar when stderr is not a terminal", func() {
		Expect(os.Mkdir(filepath.Join(s.dir, "exports"), 0o700)).To(Succeed())
		out := filepath.Join(s.dir, "exports", "t.parquet")
		Expect(s.ok("", "scan", "--stream", "t", "--format", "parquet", "--out", out)).To(BeEmpty())
		data, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data[:4])).To(Equal("PAR1"))
		Expect(string(data[len(data)-4:])).To(Equal("PAR1"), "the footer is written")
		fi, err := os.Stat(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("leaves no file behind when the export is refused", func() {
		out := filepath.Join(s.dir, "bad.csv")
		r := s.run("", "scan", "--stream", "t", "--format", "csv", "--out", out, "--where", "nope=1")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("invalid"))
		Expect(out).NotTo(BeAnExistingFile())
		entries, err := os.ReadDir(s.dir)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			Expect(e.Name()).NotTo(ContainSubstring("bad.csv"), "no temp file is left")
		}
	})

	DescribeTable("refuses a query flag with a message naming what to use instead",
		func(code int, mention string, flags []string) {
			r := s.run("", append([]string{"scan", "--stream", "t"}, flags...)...)
			Expect(r.code).To(Equal(code), r.stderr)
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(ContainSubstring(mention))
			Expect(strings.Count(r.stderr, "invalid")).To(BeNumerically("<=", 1), "the code word is not repeated")
		},
		Entry("a filter on _seq", 1, "query: invalid: filter \"_seq>5\": _seq is not a column to filter; select seqs with after= and to= (CLI: --after, --to)", []string{"--where", "_seq>5"}),
		Entry("more filters than a query takes", 1, "query: invalid: 101 filters (where=): a query takes at most 100",
			slices.Repeat([]string{"--where", "tries>0"}, 101)),
		Entry("a limit past int64", 2, `invalid argument "99999999999999999999" for "--limit" flag: too large; want at most 9223372036854775807`, []string{"--limit", "99999999999999999999"}),
	)

	It("refuses paging and export flags with --follow", func() {
		r := s.run("", "scan", "--stream", "t", "--follow", "--sort", "tries")
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("--follow prints rows in seq order"))
	})

	It("follows with filters until --to is passed", func() {
		Expect(seqsOf(s.ok("", "scan", "--stream", "t", "--follow", "--q", "web", "--to", "3"))).To(Equal([]float64{1, 3}))
	})
})

var _ = Describe("query view", func() {
	var (
		s     *store
		views string
	)

	BeforeEach(func() {
		s = newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		s.ok(taskRows, "append", "--stream", "t", "--kind", "tasks")
		views = filepath.Join(s.dir, "views.json")
		Expect(os.WriteFile(views, []byte(`{"views":[{"name":"retried","kind":"tasks","sql":"SELECT lower(host) AS host, tries FROM rows WHERE tries > 0 ORDER BY tries DESC"}]}`), 0o600)).To(Succeed())
	})

	It("runs a view over a stream window, as NDJSON and CSV", func() {
		Expect(s.ok("", "view", "run", "retried", "--views", views, "--stream", "t")).To(Equal(
			`{"host":"web-2","tries":5}` + "\n" + `{"host":"web-1","tries":2}` + "\n" + `{"host":"cache","tries":1}` + "\n"))
		Expect(s.ok("", "view", "run", "retried", "--views", views, "--stream", "t", "--after", "1", "--to", "3", "--format", "csv")).To(Equal(
			"host,tries\nweb-2,5\n"))
	})

	It("checks the views of a file and prints their columns", func() {
		Expect(s.lines("", "view", "check", "--views", views)).To(HaveLen(1))
		Expect(s.ok("", "view", "check", "--views", views)).To(ContainSubstring(`"columns":["host","tries"]`))
	})

	It("refuses a view that is not one SELECT, printing nothing", func() {
		Expect(os.WriteFile(views, []byte(`{"views":[{"name":"bad","kind":"tasks","sql":"SELECT 1; DELETE FROM tasks"}]}`), 0o600)).To(Succeed())
		r := s.run("", "view", "run", "bad", "--views", views, "--stream", "t")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("invalid"))
		Expect(r.stderr).To(ContainSubstring("one SELECT"))
		Expect(s.lines("", "scan", "--stream", "t")).To(HaveLen(4), "nothing was deleted")
	})

	DescribeTable("refuses a view that runs statements after its SELECT, on check and on run, changing nothing",
		func(args ...string) {
			attack := `SELECT * FROM rows) ; PRAGMA query_only=0; DELETE FROM record_streams; DROP TABLE tasks; SELECT (1`
			data, err := json.Marshal(map[string]any{"views": []map[string]string{{"name": "v", "kind": "tasks", "sql": attack}}})
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(views, data, 0o600)).To(Succeed())
			r := s.run("", append(args, "--views", views)...)
			Expect(r.code).To(Equal(1), r.stdout)
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(ContainSubstring("invalid: "))
			Expect(r.stderr).To(ContainSubstring("more than one statement"))
			Expect(s.ok("", "kind", "list")).To(ContainSubstring("tasks"), "the kind's table is there")
			Expect(s.lines("", "scan", "--stream", "t")).To(HaveLen(4), "the stream and its rows are there")
		},
		Entry("view check", "view", "check"),
		Entry("view run", "view", "run", "v", "--stream", "t"),
	)

	It("writes CSV cells raw by default, and with --csv-guard puts a ' before text cells a spreadsheet would run, not before numbers", func() {
		s.ok(`{"host":"=HYPERLINK(\"x\")","tries":-5}
{"host":"@SUM(1)","tries":1}
{"host":"-1+2","tries":2}
`, "append", "--stream", "f", "--kind", "tasks")
		Expect(os.WriteFile(views, []byte(`{"views":[{"name":"all","kind":"tasks","sql":"SELECT host, tries FROM rows ORDER BY _seq"}]}`), 0o600)).To(Succeed())
		run := func(flags ...string) string {
			return s.ok("", append([]string{"view", "run", "all", "--views", views, "--stream", "f", "--format", "csv"}, flags...)...)
		}
		Expect(run()).To(Equal("host,tries\n\"=HYPERLINK(\"\"x\"\")\",-5\n@SUM(1),1\n-1+2,2\n"))
		Expect(run("--csv-guard")).To(Equal("host,tries\n\"'=HYPERLINK(\"\"x\"\")\",-5\n'@SUM(1),1\n'-1+2,2\n"))
		r := s.run("", "view", "run", "all", "--views", views, "--stream", "f", "--csv-guard")
		Expect(r.code).To(Equal(2))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("--csv-guard applies to --format csv only"))
	})

	It("refuses an unknown view", func() {
		r := s.run("", "view", "run", "nope", "--views", views, "--stream", "t")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("not_found"))
	})
})

var _ = Describe("query kind search-index", func() {
	It("builds the index, after which searches find the same rows", func() {
		s := newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		s.ok(taskRows, "append", "--stream", "t", "--kind", "tasks")
		before := s.ok("", "scan", "--stream", "t", "--q", "web")
		Expect(s.ok("", "kind", "search-index", "tasks", "--column", "host")).To(BeEmpty())
		s.ok(`{"host":"WEBSITE","tries":1}`, "append", "--stream", "t", "--kind", "tasks")
		Expect(s.ok("", "scan", "--stream", "t", "--q", "web", "--to", "4")).To(Equal(before))
		Expect(decodeLines(s.ok("", "scan", "--stream", "t", "--q", "web"))).To(HaveLen(3), "a row appended after the index is found")
	})

	It("refuses a column that is not a string column", func() {
		s := newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		r := s.run("", "kind", "search-index", "tasks", "--column", "tries")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("invalid"))
	})
})
