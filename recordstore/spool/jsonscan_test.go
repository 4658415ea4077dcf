// The schema-aware scanner against the reference decoder, line by line.

package spool_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// expectSameAsReference checks that the scanner and the reference agree:
// the same values, or both an error (the scanner's wrapping ErrInvalid).
func expectSameAsReference(kind *recordstore.Kind, line string) {
	GinkgoHelper()
	want, werr := referenceDecode(kind, []byte(line))
	got, gerr := spool.ScanLine(kind, []byte(line))
	if werr != nil {
		Expect(gerr).To(MatchError(recordstore.ErrInvalid), "reference refused %q (%v); scanner returned %#v", line, werr, got)
		return
	}
	Expect(gerr).NotTo(HaveOccurred(), "reference accepted %q as %#v", line, want)
	Expect(got).To(Equal(want), "line %q", line)
}

var _ = Describe("the schema-aware scanner", func() {
	DescribeTable("decodes a line exactly as encoding/json plus Normalize",
		func(line string) { expectSameAsReference(allTypes(), line) },
		Entry("an empty object", `{}`),
		Entry("whitespace everywhere", " \t{ \"s\" : \"x\" , \"i\" :1 }\r "),
		Entry("every type", `{"s":"a","i":42,"n":1.25,"b":true,"d":"2024-01-02T03:04:05Z","j":{"k":[1,2]}}`),
		Entry("nulls", `{"s":null,"i":null,"n":null,"b":null,"d":null}`),
		Entry("int64 max", `{"i":9223372036854775807}`),
		Entry("int64 min", `{"i":-9223372036854775808}`),
		Entry("int64 overflow", `{"i":9223372036854775808}`),
		Entry("an integral exponent", `{"i":1e3}`),
		Entry("an integral fraction", `{"i":2.000}`),
		Entry("a fraction for an integer", `{"i":1.5}`),
		Entry("a huge float for an integer", `{"i":1e300}`),
		Entry("minus zero", `{"i":-0,"n":-0}`),
		Entry("a number out of range", `{"n":1e400}`),
		Entry("a tiny number", `{"n":1e-400}`),
		Entry("leading zeros", `{"i":01}`),
		Entry("a plus sign", `{"i":+1}`),
		Entry("a bare dot", `{"n":.5}`),
		Entry("a trailing dot", `{"n":5.}`),
		Entry("a bare minus", `{"n":-}`),
		Entry("an exponent without digits", `{"n":1e}`),
		Entry("a string for an integer", `{"i":"1"}`),
		Entry("a bool for a string", `{"s":true}`),
		Entry("a number for a bool", `{"b":1}`),
		Entry("an object for a string", `{"s":{"a":1}}`),
		Entry("an array for a datetime", `{"d":[1]}`),
		Entry("escapes", `{"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d"}`),
		Entry("a surrogate pair", `{"s":"\ud83d\ude00"}`),
		Entry("a lone high surrogate", `{"s":"\ud83d"}`),
		Entry("a lone low surrogate", `{"s":"\ude00x"}`),
		Entry("a high surrogate then a BMP escape", `{"s":"\ud83d\u0041"}`),
		Entry("two high surrogates", `{"s":"\ud83d\ud83d\ude00"}`),
		Entry("a bad escape", `{"s":"\x"}`),
		Entry("a short \\u escape", `{"s":"\u12"}`),
		Entry("a control character", "{\"s\":\"a\x01b\"}"),
		Entry("invalid UTF-8", "{\"s\":\"a\xffb\xc3\"}"),
		Entry("an escaped key", `{"\u0073":"x"}`),
		Entry("a duplicate key", `{"s":"a","s":"b"}`),
		Entry("a duplicate escaped key", `{"s":"a","\u0073":"b"}`),
		Entry("an unknown column", `{"zz":1}`),
		Entry("a key differing in case", `{"S":"x"}`),
		Entry("trailing garbage", `{"s":"a"} x`),
		Entry("a second object", `{}{}`),
		Entry("a trailing comma", `{"s":"a",}`),
		Entry("a missing colon", `{"s" "a"}`),
		Entry("a missing brace", `{"s":"a"`),
		Entry("an unterminated string", `{"s":"a}`),
		Entry("an array line", `[1,2]`),
		Entry("a bare value", `"x"`),
		Entry("an empty line", ``),
		Entry("a datetime with offset", `{"d":"2024-01-02T03:04:05.123456789+02:00"}`),
		Entry("a datetime without zone", `{"d":"2024-01-02T03:04:05"}`),
		Entry("a datetime in year 10000", `{"d":"10000-01-01T00:00:00Z"}`),
		Entry("json null", `{"j":null}`),
		Entry("json scalars", `{"j":-1.5e+10}`),
		Entry("json with inner whitespace", "{\"j\": { \"a\" : [ 1 , 2 ] ,\n \"b\":\"x y\" } }"),
		Entry("json with duplicate inner keys", `{"j":{"a":1,"a":2}}`),
		Entry("json with escapes kept", `{"j":"\u00e9\n"}`),
		Entry("json with invalid UTF-8", "{\"j\":\"\xff\"}"),
		Entry("json with a bad literal", `{"j":tru}`),
		Entry("json with a bad number", `{"j":[01]}`),
		Entry("json unterminated", `{"j":[1,2}`),
		Entry("json with a trailing comma", `{"j":[1,]}`),
		Entry("json with an empty object and array", `{"j":[{},[],{"a":[]}]}`),
		Entry("literals", `{"b":false,"s":null}`),
		Entry("a bad literal", `{"b":fals}`),
		Entry("a literal with trailing letters", `{"b":truex}`),
		Entry("a null with trailing letters", `{"s":nullx}`),
	)

	It("accepts json columns nested to encoding/json's depth limit and refuses deeper ones", func() {
		deep := func(n int) string {
			return `{"j":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		}
		expectSameAsReference(allTypes(), deep(10000))
		expectSameAsReference(allTypes(), deep(10001))
		_, err := spool.ScanLine(allTypes(), []byte(deep(10001)))
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("refuses a row missing a key column", func() {
		_, err := spool.ScanLine(keyed(), []byte(`{"v":1}`))
		Expect(err).To(MatchError(ContainSubstring("column k is required")))
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("reports an unknown column by name", func() {
		_, err := spool.ScanLine(allTypes(), []byte(`{"s":"a","nope":1}`))
		Expect(err).To(MatchError(ContainSubstring(`unknown column "nope"`)))
	})
})

var _ = Describe("the short float parser", func() {
	It("gives strconv.ParseFloat's double for every literal it takes, and refuses the others", func() {
		lits := []string{"0", "-0", "0.0", "-0.0", "0.000", "1", "-1", "0.1", "0.2", "0.3", "3.25", "-1234.125",
			"123456789012345", "-123456789012345", "1234567890123456", "12345678.9012345", "1234567.89012345",
			"0.000000000000001", "0.0000000000000001", "9007199254740993", "999999999999999", "99999999999999.9",
			"1e5", "1E-3", "-2.5e+10", "0.30000000000000004", "5e-324", "1.7976931348623157e308"}
		r := rand.New(rand.NewPCG(1, 2))
		for range 200_000 {
			f := (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(30)-12))
			lits = append(lits, strconv.FormatFloat(f, 'f', r.IntN(16), 64), strconv.FormatFloat(f, 'g', -1, 64))
		}
		taken := 0
		for _, lit := range lits {
			want, err := strconv.ParseFloat(lit, 64)
			Expect(err).NotTo(HaveOccurred(), lit)
			got, ok := spool.ParseShortFloat(lit)
			digits := strings.Count(lit, "") - 1 - strings.Count(lit, "-") - strings.Count(lit, ".")
			if strings.ContainsAny(lit, "eE") || digits > 15 {
				Expect(ok).To(BeFalse(), lit)
				continue
			}
			Expect(ok).To(BeTrue(), lit)
			taken++
			if math.Float64bits(got) != math.Float64bits(want) {
				Fail(fmt.Sprintf("%s parsed as %v, strconv gives %v", lit, got, want))
			}
		}
		Expect(taken).To(BeNumerically(">", 100_000))
	})
})
