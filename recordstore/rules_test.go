// Specs for the value rules Normalize applies on every path: JSON text by
// the store's one grammar, integers and numbers by their exact decimal
// value, datetimes by RFC 3339 §5.6, and short quotes of input in
// messages.

package recordstore_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("the value rules", func() {
	refused := func(row recordstore.Row, says string) {
		GinkgoHelper()
		k := allTypes()
		row["r"] = "x"
		_, err := k.Normalize(row)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(recordstore.Code(err)).To(Equal("invalid"))
		Expect(err.Error()).To(ContainSubstring(says))
	}
	stored := func(row recordstore.Row, col int, want any) {
		GinkgoHelper()
		k := allTypes()
		row["r"] = "x"
		vals, err := k.Normalize(row)
		Expect(err).NotTo(HaveOccurred())
		Expect(vals[col]).To(Equal(want))
	}

	DescribeTable("refuse json values the store's JSON grammar refuses",
		refused,
		Entry("raw text that is not UTF-8", recordstore.Row{"j": json.RawMessage("[\"a\xffb\"]")}, "byte 4: string is not valid UTF-8"),
		Entry("a lone high surrogate escape", recordstore.Row{"j": json.RawMessage(`["\ud800"]`)}, `\ud800 is a lone UTF-16 surrogate`),
		Entry("a lone low surrogate escape", recordstore.Row{"j": json.RawMessage(`"\udc00"`)}, `\udc00 is a lone UTF-16 surrogate`),
		Entry("a high surrogate then no low one", recordstore.Row{"j": json.RawMessage(`"\ud83d\u0041"`)}, "lone UTF-16 surrogate"),
		Entry("a name twice", recordstore.Row{"j": json.RawMessage(`{"i":1,"i":2}`)}, `name "i" appears twice in one object`),
		Entry("a name twice, once escaped", recordstore.Row{"j": json.RawMessage(`{"a":1,"\u0061":2}`)}, "appears twice"),
		Entry("a name twice deep down", recordstore.Row{"j": json.RawMessage(`[{"a":{"b":[{"c":1,"c":2}]}}]`)}, `name "c" appears twice`),
		Entry("a name twice among many", recordstore.Row{"j": json.RawMessage(manyNames(100) + `,"k7":0}`)}, `name "k7" appears twice`),
		Entry("a Go string that is not UTF-8", recordstore.Row{"j": "a\xffb"}, "not valid UTF-8"),
		Entry("a Go map with a string that is not UTF-8 deep down", recordstore.Row{"j": map[string]any{"a": []any{1, map[string]any{"b": "\xff"}}}}, "not valid UTF-8"),
		Entry("a Go map with a key that is not UTF-8", recordstore.Row{"j": map[string]string{"\xff": "x"}}, "not valid UTF-8"),
		Entry("a name twice inside a Go value's raw part", recordstore.Row{"j": map[string]any{"x": json.RawMessage(`{"a":1,"a":2}`)}}, "appears twice"),
	)

	DescribeTable("store json values that keep to the rules",
		func(raw, want string) { stored(recordstore.Row{"j": json.RawMessage(raw)}, 5, want) },
		Entry("a surrogate pair", `"\ud83d\ude00"`, `"\ud83d\ude00"`),
		Entry("a name in two objects", `[{"a":1},{"a":{"a":2}}]`, `[{"a":1},{"a":{"a":2}}]`),
		Entry("many distinct names", manyNames(100)+"}", manyNames(100)+"}"),
		Entry("names differing by case", `{"a":1, "A":2}`, `{"a":1,"A":2}`),
	)

	DescribeTable("refuse JSON number text that is no int64 or float64",
		refused,
		Entry("1e-400 into an integer", recordstore.Row{"i": json.Number("1e-400")}, `"1e-400" is not an integer`),
		Entry("0.5e1 past its digits", recordstore.Row{"i": json.Number("1.05e1")}, "not an integer"),
		Entry("2^63 into an integer", recordstore.Row{"i": json.Number("9223372036854775808")}, "outside int64"),
		Entry("-2^63-1 into an integer", recordstore.Row{"i": json.Number("-9223372036854775809")}, "outside int64"),
		Entry("1e19 into an integer", recordstore.Row{"i": json.Number("1e19")}, "outside int64"),
		Entry("a huge exponent into an integer", recordstore.Row{"i": json.Number("1e99999999999999999999")}, "outside int64"),
		Entry("1e400 into a number", recordstore.Row{"f": json.Number("1e400")}, "outside the float64 range"),
		Entry("-1e400 into a number", recordstore.Row{"f": json.Number("-1e400")}, "outside the float64 range"),
	)

	DescribeTable("store JSON number text by its exact value",
		func(col int, text string, want any) {
			name := map[int]string{1: "i", 2: "f"}[col]
			stored(recordstore.Row{name: json.Number(text)}, col, want)
		},
		Entry("-0 into an integer is 0", 1, "-0", int64(0)),
		Entry("-0.0e3 into an integer is 0", 1, "-0.0e3", int64(0)),
		Entry("2^63-1 written with an exponent", 1, "9.223372036854775807e18", int64(math.MaxInt64)),
		Entry("-2^63", 1, "-9223372036854775808", int64(math.MinInt64)),
		Entry("120e-1", 1, "120e-1", int64(12)),
		Entry("a zero with a huge exponent", 1, "0e99999999999999999999", int64(0)),
		Entry("1e-400 into a number rounds to 0", 2, "1e-400", 0.0),
	)

	DescribeTable("refuse datetimes RFC 3339 §5.6 refuses, or the store cannot keep",
		func(text, says string) { refused(recordstore.Row{"t": text}, says) },
		Entry("a +24:00 offset", "2024-01-02T03:04:05+24:00", "offset out of range"),
		Entry("a -00:60 offset", "2024-01-02T03:04:05-00:60", "offset out of range"),
		Entry("ten fractional digits", "2024-01-02T03:04:05.1234567891Z", "more than 9 fractional digits"),
		Entry("a dot without digits", "2024-01-02T03:04:05.Z", "want digits after '.'"),
		Entry("hour 24", "2024-01-02T24:00:00Z", "hour past 23"),
		Entry("minute 60", "2024-01-02T23:60:00Z", "minute past 59"),
		Entry("a leap second", "2016-12-31T23:59:60Z", "leap second"),
		Entry("30 February", "2024-02-30T00:00:00Z", "no such date"),
		Entry("29 February of 1900", "1900-02-29T00:00:00Z", "no such date"),
		Entry("a space for T", "2024-01-02 03:04:05Z", "want 'T'"),
		Entry("no zone", "2024-01-02T03:04:05", "want 'Z' or an offset"),
		Entry("an offset without colon", "2024-01-02T03:04:05+0100", "want 'Z' or an offset"),
		Entry("before year 0000 in UTC", "0000-01-01T00:30:00+01:00", "outside years 0000-9999"),
	)

	DescribeTable("store datetimes RFC 3339 §5.6 accepts, truncated to microseconds",
		func(text, want string) { stored(recordstore.Row{"t": text}, 4, want) },
		Entry("lowercase t and z", "2024-01-02t03:04:05z", "2024-01-02T03:04:05.000000Z"),
		Entry("nine fractional digits, truncated", "2024-01-02T03:04:05.999999999Z", "2024-01-02T03:04:05.999999Z"),
		Entry("one fractional digit", "2024-01-02T03:04:05.5Z", "2024-01-02T03:04:05.500000Z"),
		Entry("a +23:59 offset", "2024-01-02T03:04:05+23:59", "2024-01-01T03:05:05.000000Z"),
		Entry("a -00:00 offset", "2024-01-02T03:04:05-00:00", "2024-01-02T03:04:05.000000Z"),
		Entry("29 February of 2000", "2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000000Z"),
		Entry("the stored form itself", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
	)

	It("quotes long input short in a message, with its length", func() {
		k := allTypes()
		name := strings.Repeat("é", 1<<19) // 1 MiB
		_, err := k.Normalize(recordstore.Row{"r": "x", name: 1})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("(1048576 bytes)"))
		Expect(len(err.Error())).To(BeNumerically("<", 400))

		_, err = k.Normalize(recordstore.Row{"r": "x", "t": strings.Repeat("9", 1<<20)})
		Expect(err.Error()).To(ContainSubstring("(1048576 bytes)"))
		Expect(len(err.Error())).To(BeNumerically("<", 400))

		long := strings.Repeat("c", 1<<20)
		for _, err := range []error{
			recordstore.ValidateStreamID(long),
			recordstore.ValidateKindName(long),
			(&recordstore.Kind{Name: "k", Columns: []recordstore.Column{{Name: long, Type: recordstore.TypeString}}}).Validate(),
		} {
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring("(1048576 bytes)"))
			Expect(len(err.Error())).To(BeNumerically("<", 400))
		}
	})
})

// manyNames is the start of an object with n distinct names k0..k(n-1),
// without its closing brace.
func manyNames(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	return b.String()
}
