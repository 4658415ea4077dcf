// Specs for normalization parity: rows that travel through a spool codec
// and AppendBatch are stored byte for byte as a direct Append stores them.

package sqlite_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // registers the parquet codec
)

// edgeRows are rows of eventsKind with values at the edges of each type.
func edgeRows() []recordstore.Row {
	return []recordstore.Row{
		{"name": "héllo \"q\" \\ \n\t\u2028 😀 <&>", "n": int64(math.MaxInt64), "x": 0.1, "ok": true,
			"at": "2030-01-01T00:00:00.123456789+02:00", "doc": json.RawMessage(`{ "b" : [1, 2.50, "x"], "a":null }`)},
		{"name": "", "n": int64(math.MinInt64), "x": math.Copysign(0, -1), "ok": false,
			"at": time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -3600)), "doc": "a string"},
		{"n": json.Number("9007199254740993"), "x": 1e300, "doc": []any{1, "two", map[string]any{"3": 4.5}}},
		{"x": math.SmallestNonzeroFloat64, "n": 2.0, "doc": nil},
		{},
	}
}

// storedRows reads a stream's rows from its kind table as SQLite holds
// them: each column's storage class and value, in seq order.
func storedRows(db *sql.DB, stream string) [][]any {
	rows, err := db.Query(`SELECT e._seq, typeof(e.name), e.name, typeof(e.n), e.n, typeof(e.x), e.x,
		typeof(e.ok), e.ok, typeof(e.at), e.at, typeof(e.doc), e.doc
		FROM events e JOIN record_streams s ON s.no = e._seq_stream WHERE s.id = ? ORDER BY e._seq`, stream)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, 13)
		dest := make([]any, len(vals))
		for i := range vals {
			dest[i] = &vals[i]
		}
		Expect(rows.Scan(dest...)).To(Succeed())
		out = append(out, vals)
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	return out
}

var _ = Describe("spooled rows", func() {
	It("are stored exactly as a direct append stores them, through every spool codec", func() {
		b := openStore(newClock())
		k := eventsKind()
		declare(b, k)
		Expect(k.Validate()).To(Succeed())
		mustAppend(b, "direct", "events", edgeRows()...)
		db := rawDB(b)
		direct := storedRows(db, "direct")
		Expect(direct).To(HaveLen(len(edgeRows())))

		formats := spool.Formats()
		Expect(formats).To(ContainElements(spool.FormatNDJSON, spool.FormatNDJSONGz, "parquet"))
		for _, format := range formats {
			codec, err := spool.Lookup(format)
			Expect(err).NotTo(HaveOccurred())
			var buf bytes.Buffer
			enc, err := codec.NewEncoder(&buf, &k)
			Expect(err).NotTo(HaveOccurred())
			for _, v := range normalized(k, edgeRows()...) {
				Expect(enc.Write(v)).To(Succeed())
			}
			Expect(enc.Close()).To(Succeed())
			dec, err := codec.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()), &k, spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			var decoded []recordstore.Values
			for {
				v, err := dec.Next()
				if err == io.EOF {
					break
				}
				Expect(err).NotTo(HaveOccurred())
				decoded = append(decoded, v)
			}
			Expect(dec.Close()).To(Succeed())

			stream := "spooled-" + format
			res := mustBatch(b, newBatch([]recordstore.Kind{k},
				recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: "events", Rows: decoded}))
			Expect(codes(res[0])).To(Equal([]string{""}))
			Expect(storedRows(db, stream)).To(Equal(direct), format)
		}
	})
})
