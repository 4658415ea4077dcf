// The CSV guard of the rows route (csv_guard=1): text cells a spreadsheet
// would run as a formula get a "'" in front, numbers stay numbers; and
// FuzzGuardCSVCell, the guard's properties on any text.

package recordresults_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// formulaRows are jobs whose text cells start with each character a
// spreadsheet may take for a formula, and whose numbers are negative.
var formulaRows = []recordstore.Row{
	{"id": -5, "host": "=1+1", "state": "+cmd", "attempts": -3, "score": -2.5, "detail": json.RawMessage(`-1`)},
	{"id": 2, "host": "-2+3", "state": "@SUM(A1)"},
	{"id": 3, "host": "\tx", "state": "\ry"},
	{"id": 4, "host": "plain", "state": "a=b"},
}

var _ = Describe("The rows route's CSV guard", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		_, err := a.b.DeclareKind(context.Background(), queryJobs)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.b.Append(context.Background(), "f", "jobs", formulaRows)
		Expect(err).NotTo(HaveOccurred())
	})

	// cells returns the id, host, state, attempts, score and detail cells
	// of each CSV row of the response to params.
	cells := func(params string) [][]string {
		resp, body := a.respond("/api/v1/streams/f/rows?format=csv&" + params)
		ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusOK), string(body))
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ExpectWithOffset(1, recs[0]).To(Equal([]string{"_seq", "id", "host", "state", "attempts", "score", "ok", "at", "detail"}))
		var out [][]string
		for _, r := range recs[1:] {
			out = append(out, []string{r[1], r[2], r[3], r[4], r[5], r[8]})
		}
		return out
	}

	It("puts a ' before text cells starting with = + - @ tab or CR with csv_guard=1, and leaves numbers as they are", func() {
		Expect(cells("csv_guard=1")).To(Equal([][]string{
			{"-5", "'=1+1", "'+cmd", "-3", "-2.5", "-1"},
			{"2", "'-2+3", "'@SUM(A1)", "", "", ""},
			{"3", "'\tx", "'\ry", "", "", ""},
			{"4", "plain", "a=b", "", "", ""},
		}))
	})

	It("writes raw cells without csv_guard, or with csv_guard=0", func() {
		raw := [][]string{
			{"-5", "=1+1", "+cmd", "-3", "-2.5", "-1"},
			{"2", "-2+3", "@SUM(A1)", "", "", ""},
			{"3", "\tx", "\ry", "", "", ""},
			{"4", "plain", "a=b", "", "", ""},
		}
		Expect(cells("")).To(Equal(raw))
		Expect(cells("csv_guard=0")).To(Equal(raw))
	})

	It("guards one page too", func() {
		Expect(cells("csv_guard=1&page_size=1&sort=-id")).To(Equal([][]string{{"4", "plain", "a=b", "", "", ""}}))
		Expect(cells("csv_guard=1&page_size=1")).To(Equal([][]string{{"-5", "'=1+1", "'+cmd", "-3", "-2.5", "-1"}}))
	})

	It("refuses another csv_guard value with 400 invalid", func() {
		resp, body := a.respond("/api/v1/streams/f/rows?format=csv&csv_guard=yes")
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
		code, msg := apiError(string(body))
		Expect(code).To(Equal("invalid"))
		Expect(msg).To(Equal(`csv_guard="yes": want 1 or 0`))
	})
})

// FuzzGuardCSVCell: a guarded cell never starts with a formula character,
// is the text itself or "'" and the text, and survives a CSV round trip.
func FuzzGuardCSVCell(f *testing.F) {
	for _, s := range []string{"", "plain", "=1+1", "+x", "-5", "@a", "\tx", "\rx", "'=x", "a,b\n\"c\"", "\xff=", "=\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g := recordresults.GuardCSVCell(s)
		if g != s && g != "'"+s {
			t.Fatalf("GuardCSVCell(%q) = %q: want the text, or ' and the text", s, g)
		}
		if g != "" && strings.ContainsRune("=+-@\t\r", rune(g[0])) {
			t.Fatalf("GuardCSVCell(%q) = %q starts with a formula character", s, g)
		}
		if g != s && !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
			t.Fatalf("GuardCSVCell(%q) = %q guards a safe cell", s, g)
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.Write([]string{g, "x"}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		rec, err := csv.NewReader(&buf).Read()
		if err != nil {
			t.Fatalf("read back %q: %v", buf.String(), err)
		}
		// encoding/csv turns \r\n inside a quoted field into \n.
		if want := strings.ReplaceAll(g, "\r\n", "\n"); rec[0] != want {
			t.Fatalf("round trip of %q: got %q", g, rec[0])
		}
	})
}
