// Specs for the values stored in the kind tables, read back raw with
// typeof(): what other tools reading the file will see.

package sqlite_test

import (
	"encoding/json"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("stored values", func() {
	It("stores bools as 0/1, datetimes as fixed text, json compact, integers exactly", func() {
		b := openStore(newClock())
		declare(b, eventsKind())
		at := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
		mustAppend(b, "s", "events",
			recordstore.Row{"name": "max", "n": int64(math.MaxInt64), "x": 1.5, "ok": true, "at": at,
				"doc": json.RawMessage(`{ "a" : [1, 2] }`)},
			recordstore.Row{"name": "min", "n": int64(math.MinInt64), "x": 2, "ok": false, "at": "2031-05-06T07:08:09Z"},
		)
		rows, err := rawDB(b).Query(`SELECT n, typeof(n), typeof(x), ok, typeof(ok), at, typeof(at), doc, typeof(doc)
			FROM events ORDER BY _seq`)
		Expect(err).NotTo(HaveOccurred())
		defer rows.Close()
		type raw struct {
			n                      int64
			tn, tx, tok, tat, tdoc string
			ok                     int64
			at                     string
			doc                    *string
		}
		var got []raw
		for rows.Next() {
			var r raw
			Expect(rows.Scan(&r.n, &r.tn, &r.tx, &r.ok, &r.tok, &r.at, &r.tat, &r.doc, &r.tdoc)).To(Succeed())
			got = append(got, r)
		}
		Expect(rows.Err()).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(2))
		Expect(got[0].n).To(Equal(int64(math.MaxInt64)))
		Expect(got[1].n).To(Equal(int64(math.MinInt64)))
		Expect(got[0].tn).To(Equal("integer"))
		Expect(got[0].tx).To(Equal("real"))
		Expect(got[1].tx).To(Equal("real"))
		Expect([]int64{got[0].ok, got[1].ok}).To(Equal([]int64{1, 0}))
		Expect(got[0].tok).To(Equal("integer"))
		Expect(got[0].at).To(Equal("2031-05-06T06:08:09.123456Z"))
		Expect(got[1].at).To(Equal("2031-05-06T07:08:09.000000Z"))
		Expect(got[0].tat).To(Equal("text"))
		Expect(*got[0].doc).To(Equal(`{"a":[1,2]}`))
		Expect(got[0].tdoc).To(Equal("text"))
		Expect(got[1].doc).To(BeNil())

		recs := mustScan(b, "s")
		Expect(recs[0].Values["n"]).To(Equal(int64(math.MaxInt64)))
		Expect(recs[0].Values["ok"]).To(Equal(true))
		Expect(recs[0].Values["at"]).To(Equal(time.Date(2031, 5, 6, 6, 8, 9, 123456000, time.UTC)))
		Expect(recs[0].Values["doc"]).To(Equal(json.RawMessage(`{"a":[1,2]}`)))
		Expect(recs[1].Values["x"]).To(Equal(2.0))
		Expect(recs[1].Values["doc"]).To(BeNil())
	})
})
