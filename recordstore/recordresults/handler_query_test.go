// The query parameters over HTTP: the rows route filtered, sorted, paged
// and exported in every format, the page and kinds routes, and 400 with
// the code for bad parameters.

package recordresults_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// httpJobRows are the rows the HTTP query specs read, seqs 1 to 5.
var httpJobRows = []recordstore.Row{
	{"id": 1, "host": "web-1", "state": "failed", "attempts": 3, "score": 1.5, "ok": false, "at": "2026-12-01T10:00:00Z", "detail": json.RawMessage(`{"a":"x,y"}`)},
	{"id": 2, "host": "db-1", "state": "done", "attempts": 1, "score": 2.5, "ok": true, "at": "2026-12-01T11:00:00Z"},
	{"id": 3, "host": "WEB-2", "state": "failed", "attempts": 5, "score": 0.5, "ok": true, "at": "2026-12-01T12:00:00Z"},
	{"id": 4, "host": "cache", "state": "queued", "attempts": 0, "at": "2026-12-01T13:00:00Z"},
	{"id": 5, "host": "web-3", "state": "done", "attempts": 2, "score": 9, "ok": false, "at": "2026-12-01T14:00:00Z"},
}

// respond fetches path and returns the response with its body read.
func (a *apiServer) respond(path string) (*http.Response, []byte) {
	resp, err := apiClient.Get(a.srv.URL + path)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return resp, body
}

// ndjsonSeqs returns the _seq of each NDJSON line of body.
func ndjsonSeqs(body []byte) []int64 {
	var out []int64
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			Seq int64 `json:"_seq"`
		}
		ExpectWithOffset(1, json.Unmarshal([]byte(line), &r)).To(Succeed(), line)
		out = append(out, r.Seq)
	}
	return out
}

var _ = Describe("The rows route with query parameters", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		_, err := a.b.DeclareKind(context.Background(), queryJobs)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.b.Append(context.Background(), "jobs-1", "jobs", httpJobRows)
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("selects the rows the parameters describe",
		func(params string, want []int64) {
			resp, body := a.respond("/api/v1/streams/jobs-1/rows?" + params)
			Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
			Expect(resp.Header.Get("Content-Type")).To(Equal(recordresults.ContentTypeNDJSON))
			Expect(ndjsonSeqs(body)).To(Equal(want))
		},
		Entry("no parameters: every row", "", []int64{1, 2, 3, 4, 5}),
		Entry("a seq window", "after=1&to=3", []int64{2, 3}),
		Entry("a time window", "from=2026-12-01T11:00:00Z&until=2026-12-01T13:00:00Z", []int64{2, 3}),
		Entry("a case-insensitive search", "q=WeB", []int64{1, 3, 5}),
		Entry("an equality filter", "where=state=failed", []int64{1, 3}),
		Entry("two range filters", "where="+url.QueryEscape("attempts>=1")+"&where="+url.QueryEscape("attempts<5"), []int64{1, 2, 5}),
		Entry("a datetime range", "where="+url.QueryEscape("at>2026-12-01T12:00:00Z"), []int64{4, 5}),
		Entry("a bool filter", "where=ok=true", []int64{2, 3}),
		Entry("a contains filter on json", "where="+url.QueryEscape("detail~X,Y"), []int64{1}),
		Entry("a descending sort by an indexed column", "sort=-attempts", []int64{3, 1, 5, 2, 4}),
		Entry("a sort with nulls first", "sort=score", []int64{4, 3, 1, 2, 5}),
		Entry("a limit", "sort=-_seq&limit=2", []int64{5, 4}),
	)

	It("pages with a cursor in a header until the last page", func() {
		var got []int64
		path := "/api/v1/streams/jobs-1/rows?sort=host&page_size=2"
		pages := 0
		for {
			resp, body := a.respond(path)
			Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
			got = append(got, ndjsonSeqs(body)...)
			pages++
			next := resp.Header.Get(recordresults.HeaderNextCursor)
			if next == "" {
				break
			}
			path = "/api/v1/streams/jobs-1/rows?sort=host&page_size=2&cursor=" + url.QueryEscape(next)
		}
		Expect(pages).To(Equal(3))
		Expect(got).To(Equal([]int64{3, 4, 2, 1, 5}), "WEB-2 < cache < db-1 < web-1 < web-3 in byte order")
	})

	It("answers a page as JSON with the next cursor", func() {
		resp, body := a.respond("/api/v1/streams/jobs-1/page?page_size=3&where=state%21%3Ddone")
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		var p struct {
			Stream string            `json:"stream"`
			Kind   string            `json:"kind"`
			Rows   []json.RawMessage `json:"rows"`
			Next   string            `json:"next"`
		}
		Expect(json.Unmarshal(body, &p)).To(Succeed())
		Expect(p.Stream).To(Equal("jobs-1"))
		Expect(p.Kind).To(Equal("jobs"))
		Expect(p.Rows).To(HaveLen(3))
		Expect(string(p.Rows[0])).To(ContainSubstring(`"_seq":1`))
		Expect(p.Next).To(BeEmpty(), "3 rows are not done")
	})

	It("exports CSV with a header, nulls as empty fields, as a download", func() {
		resp, body := a.respond("/api/v1/streams/jobs-1/rows?format=csv&download=1&to=4")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(Equal("text/csv; charset=utf-8"))
		Expect(resp.Header.Get("Content-Disposition")).To(Equal(`attachment; filename=jobs-1.csv`))
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(5))
		Expect(recs[0]).To(Equal([]string{"_seq", "id", "host", "state", "attempts", "score", "ok", "at", "detail"}))
		Expect(recs[1]).To(Equal([]string{"1", "1", "web-1", "failed", "3", "1.5", "false", "2026-12-01T10:00:00.000000Z", `{"a":"x,y"}`}))
		Expect(recs[4]).To(Equal([]string{"4", "4", "cache", "queued", "0", "", "", "2026-12-01T13:00:00.000000Z", ""}))
	})

	It("exports Parquet that the spool's codec reads back", func() {
		resp, body := a.respond("/api/v1/streams/jobs-1/rows?format=parquet&q=web")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(Equal("application/vnd.apache.parquet"))
		k := recordstore.Kind{Name: "jobs", Columns: append([]recordstore.Column{{Name: "_seq", Type: recordstore.TypeInteger, Required: true}}, queryJobs.Columns...)}
		dec, err := parquet.Codec{}.NewDecoder(bytes.NewReader(body), int64(len(body)), &k, spool.Limits{MaxRows: 100, MaxBytes: 1 << 20})
		Expect(err).NotTo(HaveOccurred())
		defer dec.Close()
		var got [][]any
		for {
			vals, err := dec.Next()
			if err == io.EOF {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			got = append(got, []any{vals[0], vals[2]})
		}
		Expect(got).To(Equal([][]any{{int64(1), "web-1"}, {int64(3), "WEB-2"}, {int64(5), "web-3"}}))
	})

	It("describes kinds with their search and sort columns", func() {
		resp, body := a.respond("/api/v1/kinds/jobs")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		var info recordresults.KindInfo
		Expect(json.Unmarshal(body, &info)).To(Succeed())
		Expect(info.Kind.Name).To(Equal("jobs"))
		Expect(info.SearchColumns).To(Equal([]string{"host", "state"}))
		Expect(info.SortColumns).To(Equal([]string{"_seq", "id", "attempts", "at", "host", "score"}))
		Expect(info.TimeColumn).To(Equal("at"))
		_, body = a.respond("/api/v1/kinds")
		Expect(string(body)).To(ContainSubstring(`"name":"events"`))
		resp, body = a.respond("/api/v1/kinds/nope")
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound), string(body))
	})

	DescribeTable("answers 400 with code invalid for a bad parameter",
		func(route, params string) {
			resp, body := a.respond("/api/v1/streams/jobs-1/" + route + "?" + params)
			Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), string(body))
			code, msg := apiError(string(body))
			Expect(code).To(Equal("invalid"))
			Expect(msg).NotTo(BeEmpty())
			Expect(resp.Header.Get("Content-Disposition")).To(BeEmpty())
		},
		Entry("rows: a filter on an unknown column", "rows", "where=nope=1"),
		Entry("rows: an unknown format", "rows", "format=xml&download=1"),
		Entry("rows: a sort without an index", "rows", "sort=state"),
		Entry("rows: a bad cursor", "rows", "cursor=zzz&download=1"),
		Entry("rows: a page size over 1000", "rows", "page_size=5000"),
		Entry("page: a bad time", "page", "from=noon"),
		Entry("page: a value of the wrong type", "page", "where=attempts=many"),
	)
})

var _ = Describe("The query model over a kind bound to its own table", func() {
	It("filters, sorts, pages and runs views as over a store-laid table", func() {
		ctx := context.Background()
		a := newAPIServer(recordresults.HandlerOptions{}, false)
		k := recordstore.Kind{Name: "notes", Columns: []recordstore.Column{
			{Name: "id", Type: recordstore.TypeInteger}, {Name: "body", Type: recordstore.TypeString}},
			Key: []string{"body"}, Table: &recordstore.BoundTable{Name: "notes",
				DDL: []string{"CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE)"}}}
		_, err := a.b.DeclareKind(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.b.Append(ctx, "n", "notes", []recordstore.Row{{"body": "beta"}, {"body": "Alpha"}, {"body": "gamma"}, {"body": "alphabet"}})
		Expect(err).NotTo(HaveOccurred())
		_, body := a.respond("/api/v1/streams/n/rows?q=alpha&sort=-body")
		Expect(ndjsonSeqs(body)).To(Equal([]int64{4, 2}))
		_, body = a.respond("/api/v1/streams/n/rows?where=" + url.QueryEscape("id>=2") + "&to=3")
		Expect(ndjsonSeqs(body)).To(Equal([]int64{2, 3}))
		rd := recordresults.NewReader(a.b)
		v, err := rd.RegisterView(ctx, recordresults.View{Name: "long", Kind: "notes", SQL: "SELECT _seq, body FROM rows WHERE length(body) > 4"})
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Columns).To(Equal([]string{"_seq", "body"}))
		var out bytes.Buffer
		_, err = rd.ExportView(ctx, &out, "long", recordresults.ViewQuery{Stream: "n"}, recordresults.FormatCSV)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.String()).To(Equal("_seq,body\n2,Alpha\n3,gamma\n4,alphabet\n"))
		Expect(rd.CreateSearchIndex(ctx, "notes")).To(MatchError(recordstore.ErrUnsupported))
	})
})
