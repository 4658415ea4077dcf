// HandlerOptions.MaxExportRows: an export with more rows than the cap is
// refused before its first byte when that is known, else aborted at the
// cap, never sent cut short as if whole.

package recordresults_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
)

// numbered returns n msgs "m-1" ... "m-n".
func numbered(n int) []string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf("m-%d", i+1)
	}
	return msgs
}

var _ = Describe("The export cap (MaxExportRows)", func() {
	// refused checks that path is answered 400 invalid naming the cap,
	// with no download header.
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
			a = newAPIServer(recordresults.HandlerOptions{MaxExportRows: 5}, false)
			a.appendMsgs("s", numbered(12)...)
		})

		It("refuses a download that would be cut, before its first byte", func() {
			refused(a, "/api/v1/streams/s/rows?format=csv&download=1", 5)
			refused(a, "/api/v1/streams/s/rows?limit=6", 5)
			refused(a, "/api/v1/streams/s/rows?q=m", 5) // filtered: the first page shows it
		})

		It("sends an export of at most the cap whole", func() {
			for path, want := range map[string]int{
				"/api/v1/streams/s/rows?limit=5":     5,
				"/api/v1/streams/s/rows?to=5":        5,
				"/api/v1/streams/s/rows?after=7":     5,
				"/api/v1/streams/s/rows?q=m-1&to=11": 3,
			} {
				status, lines, err := a.readCut(path)
				Expect(err).NotTo(HaveOccurred(), path)
				Expect(status).To(Equal(http.StatusOK), path)
				Expect(lines).To(HaveLen(want), path)
			}
		})
	})

	Context("of 1050 rows, more than a page, over a stream of 1100", func() {
		var a *apiServer

		BeforeEach(func() {
			a = newAPIServer(recordresults.HandlerOptions{MaxExportRows: 1050}, false)
			a.appendMsgs("s", numbered(1100)...)
		})

		It("refuses an export of the whole stream from its row count, before its first byte", func() {
			refused(a, "/api/v1/streams/s/rows?format=parquet&download=1", 1050)
		})

		It("aborts a filtered export once the cap is reached with rows left, and logs it", func() {
			status, lines, err := a.readCut("/api/v1/streams/s/rows?q=m-")
			Expect(status).To(Equal(http.StatusOK))
			Expect(err).To(MatchError(io.ErrUnexpectedEOF), "the body does not end cleanly")
			Expect(lines).To(HaveLen(1050))
			Expect(a.log).To(gbytes.Say(`level=WARN msg="rows response aborted" stream=s code=invalid client_gone=false err=".*the export has more than 1050 rows`))
			Expect(a.log).To(gbytes.Say(`msg=request method=GET path=/api/v1/streams/s/rows status=200 .*aborted=true`))
		})

		It("ends a filtered export of at most the cap cleanly", func() {
			status, lines, err := a.readCut("/api/v1/streams/s/rows?q=m-&limit=1050")
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(http.StatusOK))
			Expect(lines).To(HaveLen(1050))
			Expect(strings.Contains(string(a.log.Contents()), "aborted")).To(BeFalse())
		})
	})
})
