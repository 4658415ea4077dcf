// Round trips through the codec: every column type, nulls, bounds, and
// files with many row groups.

package parquet_test

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// sampleRows covers the edges of every column type.
func sampleRows() []recordstore.Row {
	return []recordstore.Row{
		{"id": "a", "s": "plain", "i": int64(math.MaxInt64), "n": 1.5, "b": true,
			"d": "2024-02-29T23:59:59.123456Z", "j": map[string]any{"a": []any{1, map[string]any{"b": nil}}, "c": "é"}, "r": 1},
		{"id": "b", "s": "héllo 世界 🎉", "i": int64(math.MinInt64), "n": -0.000001, "b": false,
			"d": "1969-12-31T23:59:59.999999Z", "j": json.RawMessage(` [ 1 , "two" , { "x" : [ ] } ] `), "r": -1},
		{"id": "c", "s": "", "i": 0, "n": math.MaxFloat64, "b": nil,
			"d": "0000-01-01T00:00:00Z", "j": json.RawMessage(`null`), "r": 0},
		{"id": "d", "r": 42},
		{"id": "e", "s": "tab\tnew\nline \"quoted\" \\ \x00 nul", "i": 1 << 53, "n": -1e-300,
			"d": "9999-12-31T23:59:59.999999+00:00", "j": "just a string", "r": 7},
		{"id": "f", "i": -1, "n": 3, "b": true, "d": "2024-06-01T12:00:00.5+02:00", "j": 12345678901234567, "r": 8},
	}
}

var _ = Describe("round trip", func() {
	It("returns exactly the normalized values of every column type", func() {
		kind := allTypes()
		want := normalize(kind, sampleRows())
		got, err := decodeAll(kind, encode(kind, want), spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
		Expect(got[0][2]).To(Equal(int64(math.MaxInt64)))
		Expect(got[1][2]).To(Equal(int64(math.MinInt64)))
		Expect(got[0][5]).To(Equal("2024-02-29T23:59:59.123456Z"))
		Expect(got[0][6]).To(Equal(`{"a":[1,{"b":null}],"c":"é"}`))
		Expect(got[2][1]).To(Equal(""))
		Expect(got[3][1]).To(BeNil())
		Expect(got[0][4]).To(Equal(int64(1)))
		Expect(got[1][4]).To(Equal(int64(0)))
	})

	It("writes and reads a file with no rows", func() {
		kind := allTypes()
		data := encode(kind, nil)
		got, err := decodeAll(kind, data, spool.Limits{MaxRows: 1, MaxBytes: int64(len(data))})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeEmpty())
	})

	It("streams files of many row groups and batches", func() {
		kind := allTypes()
		rows := make([]recordstore.Row, 5000)
		for i := range rows {
			rows[i] = recordstore.Row{"id": fmt.Sprintf("k%05d", i), "r": i, "i": i * 7}
			if i%3 == 0 {
				rows[i]["s"] = fmt.Sprintf("row %d", i)
			}
			if i%5 == 0 {
				rows[i]["d"] = time.Unix(int64(i)*3600, int64(i)*1000).UTC()
			}
			if i%2 == 0 {
				rows[i]["n"] = float64(i) / 4
				rows[i]["b"] = i%4 == 0
			}
		}
		want := normalize(kind, rows)
		data := encodeBudget(kind, want, 1500, 1<<30)
		Expect(rowGroups(data)).To(Equal(4))
		got, err := decodeAll(kind, data, spool.Limits{MaxRows: 5000})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	})

	It("cuts row groups by the byte budget", func() {
		kind := oneColumn("s", recordstore.TypeString, false)
		var rows []recordstore.Row
		for i := 0; i < 100; i++ {
			rows = append(rows, recordstore.Row{"s": fmt.Sprintf("%01000d", i)})
		}
		want := normalize(kind, rows)
		data := encodeBudget(kind, want, 1<<20, 10_000)
		Expect(rowGroups(data)).To(Equal(10))
		got, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	})

	It("cuts row groups at the default row bound", func() {
		kind := oneColumn("i", recordstore.TypeInteger, true)
		n := 2*64*1024 + 10
		want := make([]recordstore.Values, n)
		for i := range want {
			want[i] = recordstore.Values{int64(i)}
		}
		data := encode(kind, want)
		Expect(rowGroups(data)).To(Equal(3))
		got, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	})
})

var _ = Describe("the encoder", func() {
	It("refuses a row of the wrong width or Go types, naming the column, and keeps its rows", func() {
		kind := allTypes()
		good := normalize(kind, sampleRows()[:1])[0]
		var sink discard
		enc, err := codec().NewEncoder(&sink, kind)
		Expect(err).NotTo(HaveOccurred())
		Expect(enc.Write(good)).To(Succeed())

		short := good[:3]
		Expect(enc.Write(short)).To(MatchError(recordstore.ErrInvalid))

		// One wrong value per column: null key, int for text, text for
		// integer, text for number, 2 for bool, bad datetime text, int for
		// json text, null in a required column.
		for i, bad := range []any{nil, int64(1), "x", "x", int64(2), "yesterday", int64(1), nil} {
			row := append(recordstore.Values(nil), good...)
			row[i] = bad
			err := enc.Write(row)
			Expect(err).To(MatchError(recordstore.ErrInvalid), "column %d", i)
			Expect(err.Error()).To(ContainSubstring("column " + kind.Columns[i].Name))
		}
		bad := append(recordstore.Values(nil), good...)
		bad[1] = "\xff\xfe not utf-8"
		Expect(enc.Write(bad)).To(MatchError(ContainSubstring("UTF-8")))
		Expect(enc.Close()).To(Succeed())

		got, err := decodeAll(kind, sink.Bytes(), spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]recordstore.Values{good}))
	})

	It("does not close the underlying writer", func() {
		kind := allTypes()
		var sink discard
		enc, err := codec().NewEncoder(&sink, kind)
		Expect(err).NotTo(HaveOccurred())
		Expect(enc.Close()).To(Succeed())
		Expect(sink.closed).To(BeFalse())
		Expect(enc.Write(normalize(kind, sampleRows()[:1])[0])).NotTo(Succeed())
	})

	It("reports a failing writer and stays failed", func() {
		kind := oneColumn("s", recordstore.TypeString, false)
		w := &failingWriter{after: 4}
		enc, err := pqEncoderBudget(w, kind, 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(enc.Write(recordstore.Values{"a"})).To(Succeed())
		err = enc.Write(recordstore.Values{"b"})
		Expect(err).To(MatchError(errDiskFull))
		Expect(enc.Write(recordstore.Values{"c"})).To(MatchError(errDiskFull))
		Expect(enc.Close()).To(MatchError(errDiskFull))
	})
})
