// Specs: every column type round-trips to the exact value a reader expects.

package recordstoretest

import (
	"encoding/json"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeValues() {
	Describe("values", func() {
		BeforeEach(func() { s.declare(allTypesKind()) })

		// readBack appends one row with column col set to in and returns
		// what a scan reads back for every column.
		readBack := func(col string, in any) recordstore.Row {
			s.append("values", "all_types", row{col: in})
			recs := s.scan("values")
			Expect(recs).To(HaveLen(1))
			Expect(recs[0].Values).To(HaveLen(len(allTypesKind().Columns)), "every column is present")
			for name, v := range recs[0].Values {
				if name != col {
					Expect(v).To(BeNil(), "column %s was not given", name)
				}
			}
			return recs[0].Values
		}

		DescribeTable("reads back exactly what was stored",
			func(col string, in, want any) {
				got := readBack(col, in)[col]
				switch w := want.(type) {
				case time.Time:
					Expect(got).To(BeAssignableToTypeOf(time.Time{}))
					Expect(got.(time.Time).Location()).To(Equal(time.UTC), "datetimes read back in UTC")
					Expect(got.(time.Time).Equal(w)).To(BeTrue(), "got %v, want %v", got, w)
				case json.RawMessage:
					Expect(got).To(BeAssignableToTypeOf(json.RawMessage{}))
					Expect(string(got.(json.RawMessage))).To(Equal(string(w)))
				default:
					Expect(got).To(Equal(want))
				}
			},
			Entry("an empty string", "s", "", ""),
			Entry("unicode text", "s", "héllo wörld ✓ 日本語 🎉", "héllo wörld ✓ 日本語 🎉"),
			Entry("text with quotes, newlines and a NUL byte", "s", "a\"b'\n\tc\x00d", "a\"b'\n\tc\x00d"),
			Entry("a time into a string column, in the stored datetime form", "s",
				time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600)), "2024-05-06T06:08:09.123456Z"),
			Entry("the largest int64", "i", int64(math.MaxInt64), int64(math.MaxInt64)),
			Entry("the smallest int64", "i", int64(math.MinInt64), int64(math.MinInt64)),
			Entry("2^53+1, which a float cannot hold", "i", int64(1)<<53+1, int64(1)<<53+1),
			Entry("zero", "i", 0, int64(0)),
			Entry("an integral float into an integer column", "i", 2.0, int64(2)),
			Entry("a JSON number literal into an integer column", "i", json.Number("9223372036854775807"), int64(math.MaxInt64)),
			Entry("a JSON exponent literal into an integer column", "i", json.Number("1e3"), int64(1000)),
			Entry("a fraction", "f", 1.5, 1.5),
			Entry("a negative fraction", "f", -0.1, -0.1),
			Entry("the largest float", "f", math.MaxFloat64, math.MaxFloat64),
			Entry("the smallest positive float", "f", math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64),
			Entry("an integer into a number column", "f", 3, 3.0),
			Entry("true", "b", true, true),
			Entry("false", "b", false, false),
			Entry("an RFC 3339 datetime with nanoseconds and an offset, as UTC microseconds", "t",
				"2024-02-29T23:59:59.123456789+02:00", time.Date(2024, 2, 29, 21, 59, 59, 123456000, time.UTC)),
			Entry("an RFC 3339 datetime without a fraction", "t", "2024-01-01T00:00:00Z", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
			Entry("a time.Time in another zone", "t",
				time.Date(2030, 6, 1, 12, 0, 0, 999, time.FixedZone("y", -5*3600)), time.Date(2030, 6, 1, 17, 0, 0, 0, time.UTC)),
			Entry("the last microsecond of year 9999", "t", "9999-12-31T23:59:59.999999Z", time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)),
			Entry("the first instant of year 0", "t", "0000-01-01T00:00:00Z", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)),
			Entry("nested JSON, compacted with its key order kept", "j",
				json.RawMessage("{ \"b\" : [1, 2, {\"c\": null}],\n \"a\": \"x\" }"), json.RawMessage(`{"b":[1,2,{"c":null}],"a":"x"}`)),
			Entry("a Go map, as sorted compact JSON", "j", map[string]any{"z": 1, "a": []any{true, "ü"}}, json.RawMessage(`{"a":[true,"ü"],"z":1}`)),
			Entry("a JSON integer beyond int64, digit for digit", "j", json.RawMessage(`123456789012345678901234567890`), json.RawMessage(`123456789012345678901234567890`)),
			Entry("a JSON string", "j", "text", json.RawMessage(`"text"`)),
			Entry("unicode inside JSON", "j", json.RawMessage(`{"k":"日本 🎉"}`), json.RawMessage(`{"k":"日本 🎉"}`)),
		)

		DescribeTable("reads a null back as a present nil",
			func(col string) {
				Expect(readBack(col, nil)).To(HaveKeyWithValue(col, BeNil()))
			},
			Entry("string", "s"), Entry("integer", "i"), Entry("number", "f"),
			Entry("bool", "b"), Entry("datetime", "t"), Entry("json", "j"),
		)

		It("keeps every column of a full row", func() {
			in := row{"s": "x", "i": -42, "f": 0.25, "b": true, "t": "2024-03-04T05:06:07.000008Z", "j": []any{1, "two"}}
			s.append("values", "all_types", in)
			recs := s.scan("values")
			Expect(recs).To(HaveLen(1))
			Expect(jsonText(recs[0])).To(Equal(
				`{"_seq":1,"b":true,"f":0.25,"i":-42,"j":[1,"two"],"s":"x","t":"2024-03-04T05:06:07.000008Z"}`))
		})
	})
}
