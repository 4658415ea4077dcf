// Specs of the page query's plan: every sort and filter shape the query
// builder produces bounds the seq once on each side and SQLite SEARCHes
// the table (never a second walk from the window's start), and paging
// through any shape returns exactly the rows one unpaged query does.

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// planKind has a key and a declared index to sort by, a time column and a
// string column to search.
var planKind = recordstore.Kind{
	Name: "ev",
	Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeInteger},
		{Name: "name", Type: recordstore.TypeString},
		{Name: "score", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
	},
	Key:        []string{"id"},
	TimeColumn: "at",
	Indexes:    [][]string{{"name"}},
}

// planBound is a kind bound to a table that keeps the seq in its INTEGER
// PRIMARY KEY.
var planBound = recordstore.Kind{
	Name: "bev",
	Columns: []recordstore.Column{
		{Name: "name", Type: recordstore.TypeString},
		{Name: "score", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
	},
	Table: &recordstore.BoundTable{Name: "bev_rows", DDL: []string{
		`CREATE TABLE bev_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, score REAL, ok INTEGER, at TEXT)`}},
}

// planEpoch is the time of the first row; row i is i minutes later.
var planEpoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// planShape is one filter shape of a RowQuery (no sort, cursor or limit).
type planShape struct {
	name string
	q    recordstore.RowQuery
}

// planShapes returns the filter shapes the builder produces, alone and
// together: a seq window, a time window, a search (indexed or not), and
// each kind of condition.
func planShapes() []planShape {
	from, until := planEpoch.Add(10*time.Minute), planEpoch.Add(400*time.Minute)
	return []planShape{
		{"no filter", recordstore.RowQuery{}},
		{"after", recordstore.RowQuery{After: 37}},
		{"after and to", recordstore.RowQuery{After: 37, To: 420}},
		{"time window", recordstore.RowQuery{TimeColumn: "at", From: from, Until: until}},
		{"search", recordstore.RowQuery{Text: "user-1", Search: []string{"name"}}},
		{"equality", recordstore.RowQuery{Where: []recordstore.Condition{{Column: "ok", Op: recordstore.OpEq, Value: true}}}},
		{"range", recordstore.RowQuery{Where: []recordstore.Condition{{Column: "score", Op: recordstore.OpGe, Value: 20.5}}}},
		{"contains", recordstore.RowQuery{Where: []recordstore.Condition{{Column: "name", Op: recordstore.OpContains, Value: "R-2"}}}},
		{"everything", recordstore.RowQuery{After: 5, To: 450, TimeColumn: "at", From: from, Until: until,
			Text: "user", Search: []string{"name"},
			Where: []recordstore.Condition{{Column: "ok", Op: recordstore.OpNe, Value: false}, {Column: "score", Op: recordstore.OpLt, Value: 40.5}}}},
	}
}

// planRow is row i of the plan specs.
func planRow(i int, key bool) recordstore.Row {
	r := recordstore.Row{"name": fmt.Sprintf("user-%d", i%50), "score": float64(i%60) + 0.5, "ok": i%3 != 0,
		"at": planEpoch.Add(time.Duration(i) * time.Minute)}
	if key {
		r["id"] = int64(i)
	}
	return r
}

// seqBounds returns the top-level conditions of a page query's WHERE that
// bound the seq column seq, e.g. `"_seq" > ?2`.
func seqBounds(text, seq string) []string {
	where := text[strings.Index(text, " WHERE ")+len(" WHERE ") : strings.Index(text, " ORDER BY ")]
	bound := regexp.MustCompile(`^` + regexp.QuoteMeta(seq) + ` (>|>=|<|<=) \?\d+$`)
	var out []string
	for _, c := range strings.Split(where, " AND ") {
		if bound.MatchString(c) {
			out = append(out, c)
		}
	}
	return out
}

var _ = Describe("The page query", func() {
	var b *Backend
	ctx := context.Background()
	const rows = 500

	BeforeEach(func() {
		var err error
		b, err = Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		for _, k := range []recordstore.Kind{planKind, planBound} {
			_, err = b.DeclareKind(ctx, k)
			Expect(err).NotTo(HaveOccurred())
		}
		var evs, bevs []recordstore.Row
		for i := 1; i <= rows; i++ {
			evs, bevs = append(evs, planRow(i, true)), append(bevs, planRow(i, false))
		}
		// Another stream of the same kind first, so that stream s's rows
		// are not the table's only ones.
		_, err = b.Append(ctx, "other", "ev", evs[:100])
		Expect(err).NotTo(HaveOccurred())
		_, err = b.Append(ctx, "s", "ev", evs)
		Expect(err).NotTo(HaveOccurred())
		_, err = b.Append(ctx, "bs", "bev", bevs)
		Expect(err).NotTo(HaveOccurred())
	})

	// build returns the page query of q over stream's table, as QueryRows
	// builds it, and the table's seq column.
	var streamNo int64
	build := func(stream string, q recordstore.RowQuery) (string, []any, string) {
		tx, err := b.r.BeginTx(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = tx.Rollback() }()
		s, found, err := loadStream(ctx, tx.StmtContext(ctx, b.rs.getStream), stream)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		t := b.tables.get(s.kind)
		Expect(t).NotTo(BeNil())
		streamNo = s.no
		narrow := func(w *whereBuilder, lo, hi int64) (string, error) {
			return t.searchCond(ctx, tx, w, &q, s.no, s.high, lo, hi)
		}
		text, args, err := t.querySQL(s.no, &q, narrow)
		Expect(err).NotTo(HaveOccurred())
		return text, args, t.layout.seq
	}

	explain := func(text string, args []any) string {
		r, err := b.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+text, args...)
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		var lines []string
		for r.Next() {
			var id, parent, unused int64
			var detail string
			Expect(r.Scan(&id, &parent, &unused, &detail)).To(Succeed())
			lines = append(lines, detail)
		}
		Expect(r.Err()).To(Succeed())
		return strings.Join(lines, "\n")
	}

	// withCursor returns q ordered by seq (descending when desc) and
	// resuming after the row at seq 250, as the second page of a paged
	// read does.
	withCursor := func(q recordstore.RowQuery, sort string, desc bool) recordstore.RowQuery {
		q.Sort, q.Desc, q.Limit = sort, desc, 1001
		q.HasCursor, q.CursorSeq = true, 250
		return q
	}

	checkSeqPlan := func(stream string, q recordstore.RowQuery, search *regexp.Regexp) {
		text, args, seq := build(stream, q)
		bounds := seqBounds(text, seq)
		lower, upper := 0, 0
		for _, c := range bounds {
			if strings.Contains(c, " >") {
				lower++
			} else {
				upper++
			}
		}
		Expect(lower).To(Equal(1), "one lower bound on the seq in %s", text)
		Expect(upper).To(BeNumerically("<=", 1), "at most one upper bound on the seq in %s", text)
		plan := explain(text, args)
		Expect(plan).To(MatchRegexp(search.String()), "the plan of %s", text)
		Expect(plan).NotTo(MatchRegexp(`(?m)^SCAN `), "the plan of %s", text)
		Expect(plan).NotTo(ContainSubstring("TEMP B-TREE"), "the plan of %s", text)
	}

	engineSeek := regexp.MustCompile(`SEARCH ev USING PRIMARY KEY \(_seq_stream=\? AND _seq[>=]`)
	boundSeek := regexp.MustCompile(`SEARCH bev_rows USING INTEGER PRIMARY KEY \(rowid>\?`)

	It("bounds the seq once on each side and SEARCHes it, for every filter shape and seq order", func() {
		for _, shape := range planShapes() {
			for _, sort := range []string{"", "_seq"} {
				for _, desc := range []bool{false, true} {
					By(fmt.Sprintf("%s, sort %q, desc %v", shape.name, sort, desc))
					q := shape.q
					q.Sort, q.Desc, q.Limit = sort, desc, 1001
					checkSeqPlan("s", q, engineSeek)
					checkSeqPlan("s", withCursor(shape.q, sort, desc), engineSeek)
				}
			}
		}
	})

	It("bounds a bound table's rowid once on each side and SEARCHes it", func() {
		for _, shape := range planShapes() {
			for _, desc := range []bool{false, true} {
				By(fmt.Sprintf("%s, desc %v", shape.name, desc))
				q := shape.q
				q.Desc, q.Limit = desc, 1001
				_, _, seq := build("bs", q)
				Expect(seq).To(Equal(`"id"`), "the INTEGER PRIMARY KEY holds the seq")
				checkSeqPlan("bs", q, boundSeek)
				checkSeqPlan("bs", withCursor(shape.q, "", desc), boundSeek)
			}
		}
	})

	It("narrows an indexed search to the page's seqs", func() {
		Expect(b.CreateSearchIndex(ctx, "ev", []string{"name"})).To(Succeed())
		for _, desc := range []bool{false, true} {
			q := withCursor(recordstore.RowQuery{Text: "user-1", Search: []string{"name"}}, "", desc)
			text, args, _ := build("s", q)
			Expect(text).To(ContainSubstring("MATCH"))
			plan := explain(text, args)
			Expect(plan).To(MatchRegexp(`SEARCH ev USING PRIMARY KEY \(_seq_stream=\? AND _seq`), plan)
			Expect(plan).NotTo(MatchRegexp(`(?m)^SCAN ev$`), plan)
			Expect(plan).To(ContainSubstring("VIRTUAL TABLE INDEX 0:M1><"), "the index is read by its rowid range: %s", plan)
			// The index's rowid range starts (or ends) at the cursor.
			edge := map[bool]int64{false: 250, true: 249}[desc]
			Expect(args).To(ContainElement(BeEquivalentTo(streamNo<<searchSeqBits+edge)), "%s %v", text, args)
		}
	})

	// pageAll reads q 7 rows at a time, each page resuming at the cursor of
	// the one before, as recordresults does.
	pageAll := func(stream string, q recordstore.RowQuery) []recordstore.Record {
		var out []recordstore.Record
		q.Limit = 7
		for {
			page, _, err := b.QueryRows(ctx, stream, q)
			Expect(err).NotTo(HaveOccurred())
			out = append(out, page...)
			if len(page) < q.Limit {
				return out
			}
			last := page[len(page)-1]
			q.HasCursor, q.CursorSeq = true, last.Seq
			if !q.SortsBySeq() {
				q.CursorValue = last.Values[q.Sort]
			}
		}
	}

	It("pages through every shape and order to exactly the rows of one query", func() {
		Expect(b.CreateSearchIndex(ctx, "ev", []string{"name"})).To(Succeed())
		for _, shape := range planShapes() {
			for _, sort := range []string{"", "id", "name"} {
				for _, desc := range []bool{false, true} {
					By(fmt.Sprintf("%s, sort %q, desc %v", shape.name, sort, desc))
					q := shape.q
					q.Sort, q.Desc = sort, desc
					all, _, err := b.QueryRows(ctx, "s", q)
					Expect(err).NotTo(HaveOccurred())
					Expect(all).NotTo(BeEmpty())
					Expect(pageAll("s", q)).To(Equal(all))
				}
			}
		}
	})

	It("pages through a bound table in both orders to exactly the rows of one query", func() {
		for _, shape := range planShapes() {
			for _, desc := range []bool{false, true} {
				By(fmt.Sprintf("%s, desc %v", shape.name, desc))
				q := shape.q
				q.Desc = desc
				all, _, err := b.QueryRows(ctx, "bs", q)
				Expect(err).NotTo(HaveOccurred())
				Expect(all).NotTo(BeEmpty())
				Expect(pageAll("bs", q)).To(Equal(all))
			}
		}
	})
})
