// A JSON null in a json column: stored as SQL NULL whichever way the row
// is written, so the read API's one null means one thing (the console's
// "NULL: no value"), while a JSON string "null" stays a string.

package recordresults_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A json column given JSON null", func() {
	var a *apiServer

	BeforeEach(func() {
		ctx := context.Background()
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		_, err := a.b.DeclareKind(ctx, queryJobs)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.b.Append(ctx, "n", "jobs", []recordstore.Row{
			{"id": 1, "detail": json.RawMessage(`null`)},
			{"id": 2, "detail": []int(nil)},
			{"id": 3, "detail": json.RawMessage(`"null"`)},
			{"id": 4},
		})
		Expect(err).NotTo(HaveOccurred())
	})

	It("reads back as SQL NULL from Go, the same as an absent value", func() {
		var got []any
		for rec, err := range recordresults.NewReader(a.b).Rows(context.Background(), recordresults.Query{Stream: "n"}) {
			Expect(err).NotTo(HaveOccurred())
			got = append(got, rec.Values["detail"])
		}
		Expect(got).To(Equal([]any{nil, nil, json.RawMessage(`"null"`), nil}))
	})

	It("exports as an empty CSV cell, the cell of SQL NULL, and as null in NDJSON", func() {
		resp, body := a.respond("/api/v1/streams/n/rows?format=csv")
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		var cells []string
		for _, r := range recs[1:] {
			cells = append(cells, r[len(r)-1])
		}
		Expect(cells).To(Equal([]string{"", "", `"null"`, ""}))
		_, body = a.respond("/api/v1/streams/n/rows?to=1")
		Expect(string(body)).To(ContainSubstring(`"detail":null`))
	})
})
