// The views route with the rows route's export rules: csv_guard=1 guards
// the text cells of a view's CSV, and MaxExportRows caps a view's run —
// refused before the first byte when the held-back output shows it,
// aborted and logged when it is passed later, never cut short as if whole.

package recordresults_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
)

// viewMsgs lists an events stream's rows; viewWide the same with a pad of
// 200 characters per row, so that a few hundred rows pass the bytes a
// view response holds back before its status.
var (
	viewMsgs = recordresults.View{Name: "msgs", Kind: "events", SQL: "SELECT _seq AS seq, msg FROM rows ORDER BY _seq"}
	viewWide = recordresults.View{Name: "wide", Kind: "events", SQL: "SELECT _seq AS seq, msg, hex(zeroblob(100)) AS pad FROM rows ORDER BY _seq"}
)

// serveViews serves a's store again with a Reader holding viewMsgs and
// viewWide, under opts (its logger writes to a.log).
func serveViews(a *apiServer, opts recordresults.HandlerOptions) {
	ctx := context.Background()
	rd := recordresults.NewReader(a.b)
	for _, v := range []recordresults.View{viewMsgs, viewWide} {
		_, err := rd.RegisterView(ctx, v)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
	opts.Reader = rd
	opts.Logger = slog.New(slog.NewTextHandler(a.log, nil))
	a.srv = httptest.NewServer(recordresults.Handler(a.b, opts))
	DeferCleanup(a.srv.Close)
}

var _ = Describe("The views route's CSV guard", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		a.appendMsgs("f", "=1+1", "-2+3", "@SUM(A1)", "\tx", "plain")
		serveViews(a, recordresults.HandlerOptions{})
	})

	cells := func(params string) [][]string {
		resp, body := a.respond("/api/v1/views/msgs?stream=f&format=csv" + params)
		ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusOK), string(body))
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ExpectWithOffset(1, recs[0]).To(Equal([]string{"seq", "msg"}))
		return recs[1:]
	}

	It("puts a ' before text cells starting with = + - @ tab or CR with csv_guard=1, not before numbers", func() {
		Expect(cells("&csv_guard=1")).To(Equal([][]string{{"1", "'=1+1"}, {"2", "'-2+3"}, {"3", "'@SUM(A1)"}, {"4", "'\tx"}, {"5", "plain"}}))
	})

	It("writes raw cells without csv_guard", func() {
		Expect(cells("")).To(Equal([][]string{{"1", "=1+1"}, {"2", "-2+3"}, {"3", "@SUM(A1)"}, {"4", "\tx"}, {"5", "plain"}}))
	})

	It("refuses another csv_guard value with 400 invalid", func() {
		resp, body := a.respond("/api/v1/views/msgs?stream=f&format=csv&csv_guard=yes")
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
		code, msg := apiError(string(body))
		Expect(code).To(Equal("invalid"))
		Expect(msg).To(Equal(`csv_guard="yes": want 1 or 0`))
	})

	It("guards from Go too (ExportViewWith), a negative number cell left as it is", func() {
		rd := recordresults.NewReader(a.b)
		_, err := rd.RegisterView(context.Background(), recordresults.View{Name: "neg", Kind: "events", SQL: "SELECT -_seq AS n, msg FROM rows WHERE _seq = 1"})
		Expect(err).NotTo(HaveOccurred())
		var buf bytes.Buffer
		n, err := rd.ExportViewWith(context.Background(), &buf, "neg", recordresults.ViewQuery{Stream: "f"}, recordresults.ExportOptions{Format: recordresults.FormatCSV, CSVGuard: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(1)))
		Expect(buf.String()).To(Equal("n,msg\n-1,'=1+1\n"))
	})
})

var _ = Describe("The export cap (MaxExportRows) on the views route", func() {
	refused := func(a *apiServer, path string, maxRows int) {
		resp, body := a.respond(path)
		ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusBadRequest), string(body))
		ExpectWithOffset(1, resp.Header.Get("Content-Type")).To(Equal("application/json"))
		ExpectWithOffset(1, resp.Header.Get("Content-Disposition")).To(BeEmpty())
		code, msg := apiError(string(body))
		ExpectWithOffset(1, code).To(Equal("invalid"))
		ExpectWithOffset(1, msg).To(ContainSubstring(fmt.Sprintf("the export has more than %d rows", maxRows)))
	}

	Context("of 5 rows, over a stream of 12", func() {
		var a *apiServer

		BeforeEach(func() {
			a = newAPIServer(recordresults.HandlerOptions{}, false)
			a.appendMsgs("s", numbered(12)...)
			serveViews(a, recordresults.HandlerOptions{MaxExportRows: 5})
		})

		It("refuses a run that would be cut, before its first byte", func() {
			refused(a, "/api/v1/views/msgs?stream=s&format=csv&download=1", 5)
			refused(a, "/api/v1/views/msgs?stream=s&limit=6", 5)
			refused(a, "/api/v1/views/msgs?stream=s&after=6", 5)
		})

		It("sends a run of at most the cap whole", func() {
			for path, want := range map[string]int{
				"/api/v1/views/msgs?stream=s&limit=5":         5,
				"/api/v1/views/msgs?stream=s&to=5":            5,
				"/api/v1/views/msgs?stream=s&after=7":         5,
				"/api/v1/views/msgs?stream=s&format=csv&to=3": 4, // the header and 3 rows
			} {
				status, lines, err := a.readCut(path)
				Expect(err).NotTo(HaveOccurred(), path)
				Expect(status).To(Equal(http.StatusOK), path)
				Expect(lines).To(HaveLen(want), path)
			}
		})
	})

	Context("of 1050 rows, more than the output held back, over a stream of 1100", func() {
		var a *apiServer

		BeforeEach(func() {
			a = newAPIServer(recordresults.HandlerOptions{}, false)
			a.appendMsgs("s", numbered(1100)...)
			serveViews(a, recordresults.HandlerOptions{MaxExportRows: 1050})
		})

		It("aborts a run once the cap is reached with rows left, and logs it", func() {
			for _, format := range []string{"ndjson", "csv"} {
				status, lines, err := a.readCut("/api/v1/views/wide?stream=s&format=" + format)
				Expect(status).To(Equal(http.StatusOK), format)
				Expect(err).To(MatchError(io.ErrUnexpectedEOF), "the body does not end cleanly: "+format)
				Expect(len(lines)).To(BeNumerically("<=", 1051), format)
				Expect(a.log).To(gbytes.Say(`level=WARN msg="view response aborted" stream=s code=invalid client_gone=false err=".*view wide over stream s: the export has more than 1050 rows`))
				Expect(a.log).To(gbytes.Say(`msg=request method=GET path=/api/v1/views/wide status=200 .*aborted=true`))
			}
		})

		It("ends a run of at most the cap cleanly", func() {
			status, lines, err := a.readCut("/api/v1/views/wide?stream=s&limit=1050")
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(http.StatusOK))
			Expect(lines).To(HaveLen(1050))
			Expect(strings.Contains(string(a.log.Contents()), "aborted")).To(BeFalse())
		})
	})
})
