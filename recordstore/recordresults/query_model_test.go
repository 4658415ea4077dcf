// The query model against a reference: random rows stored both in a real
// SQLite store and in recordstoretest's model, random queries paged through
// a Reader over each, compared with a plain filter-and-sort written here.

package recordresults_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstoretest"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// queryJobs has a column of every filterable type, a replace key (so that
// replaced rows leave holes in the seqs), indexes to sort by, and a time
// column.
var queryJobs = recordstore.Kind{
	Name: "jobs",
	Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeInteger},
		{Name: "host", Type: recordstore.TypeString},
		{Name: "state", Type: recordstore.TypeString},
		{Name: "attempts", Type: recordstore.TypeInteger},
		{Name: "score", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
		{Name: "detail", Type: recordstore.TypeJSON},
	},
	Key:        []string{"id"},
	OnConflict: recordstore.ConflictReplace,
	TimeColumn: "at",
	Indexes:    [][]string{{"attempts"}, {"at"}, {"host"}, {"score"}},
}

var (
	jobHosts  = []string{"web-1", "Web-2", "db-1", "cache", "WEBSTER", "api"}
	jobStates = []string{"queued", "running", "failed", "done"}
	jobEpoch  = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
)

// randomQueryJob returns a jobs row with id below ids; each column is null now
// and then.
func randomQueryJob(rng *rand.Rand, ids int) recordstore.Row {
	maybe := func(v any) any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return v
	}
	return recordstore.Row{
		"id":       int64(rng.IntN(ids)),
		"host":     maybe(jobHosts[rng.IntN(len(jobHosts))]),
		"state":    maybe(jobStates[rng.IntN(len(jobStates))]),
		"attempts": maybe(int64(rng.IntN(6))),
		"score":    maybe(float64(rng.IntN(40)) / 4),
		"ok":       maybe(rng.IntN(2) == 0),
		"at":       maybe(jobEpoch.Add(time.Duration(rng.IntN(48)) * time.Hour)),
		"detail":   maybe(json.RawMessage(fmt.Sprintf(`{"queue":%q}`, jobStates[rng.IntN(len(jobStates))]))),
	}
}

// randomQuery returns a query of stream s over queryJobs.
func randomQuery(rng *rand.Rand, s string) recordresults.Query {
	q := recordresults.Query{Stream: s, PageSize: 1 + rng.IntN(40)}
	if rng.IntN(3) == 0 {
		q.After = int64(rng.IntN(100))
	}
	if rng.IntN(3) == 0 {
		q.To = q.After + 1 + int64(rng.IntN(200))
	}
	if rng.IntN(3) == 0 {
		q.From = jobEpoch.Add(time.Duration(rng.IntN(30)) * time.Hour)
	}
	if rng.IntN(3) == 0 {
		q.Until = jobEpoch.Add(time.Duration(31+rng.IntN(30)) * time.Hour)
	}
	if rng.IntN(3) == 0 {
		q.Text = []string{"web", "WEB", "e", "-1", "Ach", "fail", "zzz"}[rng.IntN(7)]
	}
	for range rng.IntN(3) {
		q.Where = append(q.Where, randomFilter(rng))
	}
	sorts := []string{"", "_seq", "-_seq", "attempts", "-attempts", "at", "-at", "host", "-host", "score", "-score", "id", "-id"}
	q.Sort = sorts[rng.IntN(len(sorts))]
	return q
}

func randomFilter(rng *rand.Rand) recordresults.Filter {
	ops := []recordstore.CondOp{recordstore.OpEq, recordstore.OpNe, recordstore.OpLt, recordstore.OpLe, recordstore.OpGt, recordstore.OpGe}
	op := ops[rng.IntN(len(ops))]
	switch rng.IntN(7) {
	case 0:
		return recordresults.Filter{Column: "attempts", Op: op, Value: fmt.Sprint(rng.IntN(6))}
	case 1:
		return recordresults.Filter{Column: "score", Op: op, Value: fmt.Sprint(float64(rng.IntN(40)) / 4)}
	case 2:
		return recordresults.Filter{Column: "at", Op: op, Value: jobEpoch.Add(time.Duration(rng.IntN(48)) * time.Hour).Format(time.RFC3339)}
	case 3:
		return recordresults.Filter{Column: "state", Op: op, Value: jobStates[rng.IntN(len(jobStates))]}
	case 4:
		return recordresults.Filter{Column: "ok", Op: []recordstore.CondOp{recordstore.OpEq, recordstore.OpNe}[rng.IntN(2)], Value: fmt.Sprint(rng.IntN(2) == 0)}
	case 5:
		return recordresults.Filter{Column: "host", Op: recordstore.OpContains, Value: []string{"WEB", "b-", "1"}[rng.IntN(3)]}
	}
	return recordresults.Filter{Column: "detail", Op: recordstore.OpContains, Value: []string{"RUN", "queue", "done"}[rng.IntN(3)]}
}

// referenceQuery is the query computed plainly over every stored record.
func referenceQuery(all []recordstore.Record, q recordresults.Query) []recordstore.Record {
	var out []recordstore.Record
	for _, r := range all {
		if referenceMatch(r, q) {
			out = append(out, r)
		}
	}
	col, desc := strings.CutPrefix(q.Sort, "-")
	slices.SortStableFunc(out, func(a, b recordstore.Record) int {
		c := 0
		if col != "" && col != "_seq" {
			c = referenceCompare(a.Values[col], b.Values[col])
		}
		return cmp.Or(c, cmp.Compare(a.Seq, b.Seq))
	})
	if desc {
		slices.Reverse(out)
	}
	return out
}

func referenceMatch(r recordstore.Record, q recordresults.Query) bool {
	if r.Seq <= q.After || q.To != 0 && r.Seq > q.To {
		return false
	}
	if !q.From.IsZero() || !q.Until.IsZero() {
		at, ok := r.Values["at"].(time.Time)
		if !ok || !q.From.IsZero() && at.Before(q.From) || !q.Until.IsZero() && !at.Before(q.Until) {
			return false
		}
	}
	if q.Text != "" {
		hit := false
		for _, c := range []string{"host", "state"} {
			s, ok := r.Values[c].(string)
			hit = hit || ok && strings.Contains(strings.ToLower(s), strings.ToLower(q.Text))
		}
		if !hit {
			return false
		}
	}
	for _, f := range q.Where {
		if !referenceFilter(r.Values[f.Column], f) {
			return false
		}
	}
	return true
}

// referenceFilter parses the filter's value on its own and compares.
func referenceFilter(v any, f recordresults.Filter) bool {
	if v == nil {
		return false
	}
	if f.Op == recordstore.OpContains {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.RawMessage:
			s = string(x)
		}
		return strings.Contains(strings.ToLower(s), strings.ToLower(f.Value))
	}
	var want any
	switch v.(type) {
	case int64:
		var n int64
		_, _ = fmt.Sscan(f.Value, &n)
		want = n
	case float64:
		var n float64
		_, _ = fmt.Sscan(f.Value, &n)
		want = n
	case bool:
		want = f.Value == "true"
	case time.Time:
		want, _ = time.Parse(time.RFC3339, f.Value)
	default:
		want = f.Value
	}
	c := referenceCompare(v, want)
	switch f.Op {
	case recordstore.OpEq:
		return c == 0
	case recordstore.OpNe:
		return c != 0
	case recordstore.OpLt:
		return c < 0
	case recordstore.OpLe:
		return c <= 0
	case recordstore.OpGt:
		return c > 0
	}
	return c >= 0
}

// referenceCompare orders two values of one column, nulls first.
func referenceCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case time.Time:
		return x.Compare(b.(time.Time))
	case bool:
		if x == b.(bool) {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	}
	return strings.Compare(a.(string), b.(string))
}

// pageAll pages through q with r and returns every row and page count.
func pageAll(ctx context.Context, r *recordresults.Reader, q recordresults.Query, between func()) ([]recordstore.Record, int) {
	var out []recordstore.Record
	pages := 0
	for {
		p, err := r.Page(ctx, q)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "query %+v", q)
		ExpectWithOffset(1, len(p.Rows)).To(BeNumerically("<=", q.PageSize))
		out = append(out, p.Rows...)
		pages++
		if p.Next == "" {
			return out, pages
		}
		ExpectWithOffset(1, p.Rows).NotTo(BeEmpty(), "a page with a next cursor holds rows")
		q.Cursor = p.Next
		if between != nil {
			between()
		}
	}
}

func seqs(recs []recordstore.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

var _ = Describe("The query model", func() {
	var (
		ctx    context.Context
		st     *records.Store
		reader *recordresults.Reader
		model  recordstore.Backend
		rng    *rand.Rand
	)
	BeforeEach(func() {
		ctx = context.Background()
		var err error
		st, err = records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		reader = recordresults.NewReader(st.Backend())
		model = recordstoretest.NewModel(recordstoretest.NewClock(jobEpoch))
		for _, b := range []recordstore.Backend{st.Backend(), model} {
			_, err := b.DeclareKind(ctx, queryJobs)
			Expect(err).NotTo(HaveOccurred())
		}
		rng = rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 20))
	})

	// fill appends the same random rows to the store and the model, in
	// batches of distinct keys.
	fill := func(batches, per, ids int) {
		for range batches {
			seen := map[any]bool{}
			var rows []recordstore.Row
			for len(rows) < per {
				r := randomQueryJob(rng, ids)
				if !seen[r["id"]] {
					seen[r["id"]] = true
					rows = append(rows, r)
				}
			}
			for _, b := range []recordstore.Backend{st.Backend(), model} {
				_, err := b.Append(ctx, "s", "jobs", rows)
				Expect(err).NotTo(HaveOccurred())
			}
		}
	}
	stored := func(b recordstore.Backend) []recordstore.Record {
		recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		return recs
	}

	It("pages through exactly the rows a plain filter and sort of the model select, for random queries", func() {
		fill(12, 20, 150)
		all := stored(model)
		Expect(seqs(stored(st.Backend()))).To(Equal(seqs(all)), "the store and the model hold the same rows")
		modelReader := recordresults.NewReader(model)
		nonEmpty := 0
		for i := range 200 {
			q := randomQuery(rng, "s")
			want := referenceQuery(all, q)
			got, _ := pageAll(ctx, reader, q, nil)
			Expect(seqs(got)).To(Equal(seqs(want)), "query %d: %+v", i, q)
			if len(want) > 0 {
				nonEmpty++
				Expect(got[0].Values).To(Equal(want[0].Values))
			}
			if q.Sort == "" || q.Sort == "_seq" {
				viaScan, _ := pageAll(ctx, modelReader, q, nil)
				Expect(seqs(viaScan)).To(Equal(seqs(want)), "query %d over the model: %+v", i, q)
			}
		}
		Expect(nonEmpty).To(BeNumerically(">", 50), "most random queries select rows")
	})

	It("selects the same rows with a search index as without, and keeps the index in step with appends", func() {
		fill(6, 20, 100)
		Expect(reader.CreateSearchIndex(ctx, "jobs")).To(Succeed())
		fill(6, 20, 100) // replaced and new rows after the index exists
		all := stored(model)
		for i := range 150 {
			q := randomQuery(rng, "s")
			q.Text = []string{"web", "WEB", "e", "-1", "Ach", "fail", "zzz", "eue", "b-2"}[rng.IntN(9)]
			got, _ := pageAll(ctx, reader, q, nil)
			Expect(seqs(got)).To(Equal(seqs(referenceQuery(all, q))), "query %d: %+v", i, q)
		}
	})

	It("exports NDJSON byte for byte as each record's own JSON", func() {
		fill(3, 20, 100)
		odd := []recordstore.Row{
			{"id": 500, "host": `<script>"x"&</script>`, "state": "naïve\u2028é\n", "score": 1e21, "detail": json.RawMessage(`{"a":"<"}`)},
			{"id": 501, "host": "tab\there", "score": 0.1, "ok": true, "at": jobEpoch},
		}
		_, err := st.Backend().Append(ctx, "s", "jobs", odd)
		Expect(err).NotTo(HaveOccurred())
		var out bytes.Buffer
		n, err := reader.Export(ctx, &out, recordresults.Query{Stream: "s"}, recordresults.FormatNDJSON, nil)
		Expect(err).NotTo(HaveOccurred())
		var want bytes.Buffer
		for _, r := range stored(st.Backend()) {
			b, err := r.MarshalJSON()
			Expect(err).NotTo(HaveOccurred())
			want.Write(b)
			want.WriteByte('\n')
		}
		Expect(n).To(BeNumerically(">", 40))
		Expect(out.String()).To(Equal(want.String()))
	})

	It("reads the same rows with Rows as page by page, up to the limit", func() {
		fill(6, 20, 1000)
		all := stored(model)
		for range 30 {
			q := randomQuery(rng, "s")
			q.Limit = rng.IntN(40)
			want := referenceQuery(all, q)
			if q.Limit > 0 && len(want) > q.Limit {
				want = want[:q.Limit]
			}
			var got []recordstore.Record
			for rec, err := range reader.Rows(ctx, q) {
				Expect(err).NotTo(HaveOccurred())
				got = append(got, rec)
			}
			Expect(seqs(got)).To(Equal(seqs(want)), "%+v", q)
		}
	})

	It("keeps a paged read stable while rows are appended between its pages", func() {
		fill(5, 20, 100)
		next := int64(1000)
		for range 20 {
			q := randomQuery(rng, "s")
			q.PageSize = 1 + rng.IntN(5)
			want := referenceQuery(stored(st.Backend()), q)
			got, pages := pageAll(ctx, reader, q, func() {
				row := randomQueryJob(rng, 1)
				row["id"] = next // a new key: no stored row moves
				next++
				_, err := st.Backend().Append(ctx, "s", "jobs", []recordstore.Row{row})
				Expect(err).NotTo(HaveOccurred())
			})
			Expect(seqs(got)).To(Equal(seqs(want)), "%+v over %d pages", q, pages)
		}
		Expect(next).To(BeNumerically(">", 1000), "rows were appended during the reads")
	})
})

var _ = Describe("A bad query", func() {
	var reader *recordresults.Reader
	BeforeEach(func() {
		ctx := context.Background()
		st, err := records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		_, err = st.Backend().DeclareKind(ctx, queryJobs)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().DeclareKind(ctx, apiEvents)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().Append(ctx, "s", "jobs", []recordstore.Row{{"id": 1, "host": "web"}})
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().Append(ctx, "plain", "events", []recordstore.Row{{"msg": "x"}})
		Expect(err).NotTo(HaveOccurred())
		counts := recordstore.Kind{Name: "counts", Columns: []recordstore.Column{{Name: "n", Type: recordstore.TypeInteger}}}
		_, err = st.Backend().DeclareKind(ctx, counts)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().Append(ctx, "s2", "counts", []recordstore.Row{{"n": 1}})
		Expect(err).NotTo(HaveOccurred())
		reader = recordresults.NewReader(st.Backend())
	})

	DescribeTable("is refused as invalid, naming what is wrong",
		func(stream, params, mention string) {
			v, err := url.ParseQuery(params)
			Expect(err).NotTo(HaveOccurred())
			q, err := recordresults.ParseQuery(stream, v)
			if err == nil {
				_, err = reader.Page(context.Background(), q)
			}
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(recordstore.Message(err)).To(ContainSubstring(mention))
		},
		Entry("a negative after", "s", "after=-1", "after"),
		Entry("a seq that is not a number", "s", "to=ten", "to"),
		Entry("a window that ends before it starts", "s", "after=5&to=5", "to=5"),
		Entry("a from that is not a datetime", "s", "from=yesterday", "from"),
		Entry("an until not after from", "s", "from=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", "until"),
		Entry("a time window on a kind without a time column", "plain", "from=2026-12-01T00:00:00Z", "time column"),
		Entry("a page size over the maximum", "s", "page_size=1001", "page_size"),
		Entry("a negative limit", "s", "limit=-3", "limit"),
		Entry("a filter without an operator", "s", "where=attempts", "operator"),
		Entry("a filter without a column", "s", "where=%3E%3D3", "COLUMN OP VALUE"),
		Entry("a filter on an unknown column", "s", "where=nope=1", "no column"),
		Entry("a filter whose value is not the column's type", "s", "where=attempts%3E%3D3.5", "not an integer"),
		Entry("a range on a bool column", "s", "where=ok%3Etrue", "bool"),
		Entry("a bool that is not true or false", "s", "where=ok=yes", "true or false"),
		Entry("an equality on a json column", "s", "where=detail=1", "json"),
		Entry("a contains on a number column", "s", "where=score~1", "contains"),
		Entry("a datetime filter that is not RFC 3339", "s", "where=at%3E2026", "RFC 3339"),
		Entry("a sort by a column without an index", "s", "sort=state", "sorts only by"),
		Entry("a sort by an unknown column", "s", "sort=-nope", "sorts only by"),
		Entry("a cursor that is not one", "s", "cursor=abc", "cursor"),
		Entry("a search on a kind without string columns", "s2", "q=x", "no search columns"),
		Entry("a malformed stream id", "bad stream!", "", "stream"),
		Entry("a number filter on NaN", "s", "where=score%3ENaN", "not a finite number"),
		Entry("a number filter on nan", "s", "where=score%3Cnan", "not a finite number"),
		Entry("a number filter on Inf", "s", "where=score%3CInf", "not a finite number"),
		Entry("a number filter on -Inf", "s", "where=score%3E-Inf", "not a finite number"),
		Entry("a number filter on +Inf", "s", "where=score=%2BInf", "not a finite number"),
		Entry("a number filter on infinity", "s", "where=score!=infinity", "not a finite number"),
		Entry("a number filter on -INFINITY", "s", "where=score%3E%3D-INFINITY", "not a finite number"),
		Entry("more filters than a query takes", "s", strings.Repeat("where=attempts%3E1&", recordresults.MaxFilters+1), "at most 100"),
		Entry("a filter on _seq", "s", "where=_seq%3E5", "after= and to= (CLI: --after, --to)"),
		Entry("a limit past int64", "s", "limit=99999999999999999999", "too large; want 0 to 9223372036854775807"),
		Entry("a seq past int64", "s", "after=99999999999999999999", "too large"),
	)

	It("takes as many filters as a query takes, and refuses one more over HTTP with a 400", func() {
		where := strings.Repeat("where=attempts%3E1&", recordresults.MaxFilters)
		v, err := url.ParseQuery(where)
		Expect(err).NotTo(HaveOccurred())
		q, err := recordresults.ParseQuery("s", v)
		Expect(err).NotTo(HaveOccurred())
		_, err = reader.Page(context.Background(), q)
		Expect(err).NotTo(HaveOccurred())
		srv := httptest.NewServer(recordresults.Handler(reader.Backend(), recordresults.HandlerOptions{Reader: reader}))
		DeferCleanup(srv.Close)
		for _, n := range []int{recordresults.MaxFilters + 1, 998} {
			resp, err := http.Get(srv.URL + "/api/v1/streams/s/rows?" + strings.Repeat("where=attempts%3E1&", n))
			Expect(err).NotTo(HaveOccurred())
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), string(body))
			Expect(string(body)).To(ContainSubstring(`"code":"invalid"`))
			Expect(string(body)).To(ContainSubstring("at most 100"))
		}
	})

	It("refuses a cursor returned for another query", func() {
		ctx := context.Background()
		for i := 2; i < 6; i++ {
			_, err := reader.Backend().Append(ctx, "s", "jobs", []recordstore.Row{{"id": i, "host": "web"}})
			Expect(err).NotTo(HaveOccurred())
		}
		p, err := reader.Page(ctx, recordresults.Query{Stream: "s", PageSize: 2, Text: "web"})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Next).NotTo(BeEmpty())
		_, err = reader.Page(ctx, recordresults.Query{Stream: "s", PageSize: 2, Text: "WEB", Cursor: p.Next})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		_, err = reader.Page(ctx, recordresults.Query{Stream: "s", PageSize: 2, Text: "web", Cursor: p.Next[:len(p.Next)-2]})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		again, err := reader.Page(ctx, recordresults.Query{Stream: "s", PageSize: 2, Text: "web", Cursor: p.Next})
		Expect(err).NotTo(HaveOccurred())
		Expect(seqs(again.Rows)).To(Equal([]int64{3, 4}))
	})
})
