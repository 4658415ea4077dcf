// Views: registration checks the SQL is one SELECT over rows and learns
// its columns; runs read the stream window, from Go and over HTTP.

package recordresults_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// byState counts a jobs stream's rows by state.
var byState = recordresults.View{Name: "by_state", Kind: "jobs",
	SQL: "SELECT state, count(*) AS n, max(_seq) AS last FROM rows GROUP BY state ORDER BY state"}

var _ = Describe("A view", func() {
	var (
		ctx context.Context
		a   *apiServer
		rd  *recordresults.Reader
	)

	BeforeEach(func() {
		ctx = context.Background()
		rd = nil
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		_, err := a.b.DeclareKind(ctx, queryJobs)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.b.Append(ctx, "jobs-1", "jobs", httpJobRows)
		Expect(err).NotTo(HaveOccurred())
		a.appendMsgs("e1", "x")
	})

	// serve serves the API with a Reader holding byState.
	serve := func() {
		rd = recordresults.NewReader(a.b)
		v, err := rd.RegisterView(ctx, byState)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Columns).To(Equal([]string{"state", "n", "last"}))
		a.srv = httptest.NewServer(recordresults.Handler(a.b, recordresults.HandlerOptions{Reader: rd}))
		DeferCleanup(a.srv.Close)
	}

	It("runs over a stream window from Go", func() {
		serve()
		var got [][]any
		err := rd.RunView(ctx, "by_state", recordresults.ViewQuery{Stream: "jobs-1", After: 1}, func(cols []string, vals []any) error {
			Expect(cols).To(Equal([]string{"state", "n", "last"}))
			got = append(got, append([]any(nil), vals...))
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([][]any{{"done", int64(2), int64(5)}, {"failed", int64(1), int64(3)}, {"queued", int64(1), int64(4)}}))
	})

	It("answers its rows over HTTP as NDJSON with keys in column order, and as CSV", func() {
		serve()
		resp, body := a.respond("/api/v1/views/by_state?stream=jobs-1&to=3")
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(Equal(`{"state":"done","n":1,"last":2}` + "\n" + `{"state":"failed","n":2,"last":3}` + "\n"))
		resp, body = a.respond("/api/v1/views/by_state?stream=jobs-1&format=csv&download=1&after=5")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Disposition")).To(Equal("attachment; filename=by_state.csv"))
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(Equal([][]string{{"state", "n", "last"}}), "an empty window has the header only")
		_, body = a.respond("/api/v1/views")
		Expect(string(body)).To(ContainSubstring(`"name":"by_state"`))
		Expect(string(body)).To(ContainSubstring(`"columns":["state","n","last"]`))
	})

	DescribeTable("refuses a run that cannot read, with a status and a code",
		func(path string, status int, code string) {
			serve()
			resp, body := a.respond(path)
			Expect(resp.StatusCode).To(Equal(status), string(body))
			c, _ := apiError(string(body))
			Expect(c).To(Equal(code))
		},
		Entry("an unknown view", "/api/v1/views/nope?stream=jobs-1", http.StatusNotFound, "not_found"),
		Entry("a stream of another kind", "/api/v1/views/by_state?stream=e1", http.StatusBadRequest, "invalid"),
		Entry("a missing stream", "/api/v1/views/by_state?stream=none", http.StatusNotFound, "not_found"),
		Entry("a window that ends before it starts", "/api/v1/views/by_state?stream=jobs-1&after=3&to=2", http.StatusBadRequest, "invalid"),
		Entry("a parquet export", "/api/v1/views/by_state?stream=jobs-1&format=parquet", http.StatusBadRequest, "unsupported"),
	)

	DescribeTable("refuses at registration SQL that is not one read-only SELECT over rows",
		func(v recordresults.View, sentinel error, mention string) {
			r := recordresults.NewReader(a.b)
			_, err := r.RegisterView(ctx, v)
			Expect(err).To(MatchError(sentinel))
			Expect(err).To(MatchError(ContainSubstring(mention)))
			Expect(r.Views()).To(BeEmpty())
		},
		Entry("a write", recordresults.View{Name: "w", Kind: "jobs", SQL: "DELETE FROM rows"}, recordstore.ErrInvalid, "one SELECT"),
		Entry("a second statement", recordresults.View{Name: "w", Kind: "jobs", SQL: "SELECT 1; DROP TABLE jobs"}, recordstore.ErrInvalid, "one SELECT"),
		Entry("statements after the subquery", recordresults.View{Name: "w", Kind: "jobs",
			SQL: "SELECT * FROM rows) ; PRAGMA query_only=0; DELETE FROM record_streams; DROP TABLE jobs; SELECT (1"}, recordstore.ErrInvalid, "more than one statement"),
		Entry("a pragma", recordresults.View{Name: "w", Kind: "jobs", SQL: "PRAGMA journal_mode=DELETE"}, recordstore.ErrInvalid, "one SELECT"),
		Entry("an unknown column", recordresults.View{Name: "w", Kind: "jobs", SQL: "SELECT colour FROM rows"}, recordstore.ErrInvalid, "colour"),
		Entry("no SQL", recordresults.View{Name: "w", Kind: "jobs", SQL: "  "}, recordstore.ErrInvalid, "no SQL"),
		Entry("a bad name", recordresults.View{Name: "a b", Kind: "jobs", SQL: "SELECT 1"}, recordstore.ErrInvalid, "view name"),
		Entry("an undeclared kind", recordresults.View{Name: "w", Kind: "nope", SQL: "SELECT 1"}, recordstore.ErrNotFound, "nope"),
	)
})
