// Specs of canonical JSON: vectors written by Python's json.dumps, Go
// values of every supported kind, and refusals.

package dbfiles_test

import (
	"encoding/json"
	"math"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// canonicalVector is one line of testdata/canonical.json: JSON text and
// what json.dumps(json.loads(in), sort_keys=True, separators=(",", ":"),
// ensure_ascii=False) writes for it.
type canonicalVector struct {
	In  string `json:"in"`
	Out string `json:"out"`
}

var _ = Describe("Canonical JSON", func() {
	It("writes what Python writes for every pinned vector, and is a fixed point", func() {
		b, err := os.ReadFile("testdata/canonical.json")
		Expect(err).NotTo(HaveOccurred())
		var vs []canonicalVector
		Expect(json.Unmarshal(b, &vs)).To(Succeed())
		Expect(vs).NotTo(BeEmpty())
		for _, v := range vs {
			got, err := dbfiles.Canonicalize([]byte(v.In))
			Expect(err).NotTo(HaveOccurred(), "input %q", v.In)
			Expect(string(got)).To(Equal(v.Out), "input %q", v.In)
			again, err := dbfiles.Canonicalize(got)
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(Equal(got))
		}
	})

	DescribeTable("encodes Go values",
		func(v any, want string) {
			got, err := dbfiles.CanonicalJSON(v)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))
		},
		Entry("nil", nil, "null"),
		Entry("bools", []bool{true, false}, "[true,false]"),
		Entry("ints of every width", []any{int8(-8), int16(16), int32(-32), int64(1 << 62), uint8(8), uint16(16), uint32(32), uint64(1 << 63), 7, uint(9)},
			"[-8,16,-32,4611686018427387904,8,16,32,9223372036854775808,7,9]"),
		Entry("an integral float", 100.0, "100.0"),
		Entry("a small float", 1e-05, "1e-05"),
		Entry("a large float", 1e16, "1e+16"),
		Entry("a tenth", 0.1, "0.1"),
		Entry("negative zero", math.Copysign(0, -1), "-0.0"),
		Entry("float32 as the float64 it is", float32(0.5), "0.5"),
		Entry("sorted keys at every depth", map[string]any{"b": map[string]int{"y": 1, "x": 2}, "a": []string{"z"}}, `{"a":["z"],"b":{"x":2,"y":1}}`),
		Entry("keys in code point order", map[string]int{"é": 1, "z": 2, "Z": 3, "😀": 4}, `{"Z":3,"z":2,"é":1,"😀":4}`),
		Entry("HTML characters and line separators raw", "<a&b>\u2028\u2029", "\"<a&b>\u2028\u2029\""),
		Entry("control characters escaped as Python does", "\x00\b\f\n\r\t\x1f\x7f\"\\/", `"\u0000\b\f\n\r\t\u001f`+"\x7f"+`\"\\/"`),
		Entry("a pointer and a nil pointer", []any{ptr("x"), (*string)(nil)}, `["x",null]`),
		Entry("a json.Number, exactly", json.Number("123456789012345678901234567890"), "123456789012345678901234567890"),
		Entry("a nil slice and a nil map", []any{[]int(nil), map[string]int(nil)}, "[null,null]"),
		Entry("an empty map", map[string]any{}, "{}"),
	)

	DescribeTable("refuses values with no canonical form",
		func(v any) {
			_, err := dbfiles.CanonicalJSON(v)
			Expect(err).To(MatchError(dbfiles.ErrUnsupported))
		},
		Entry("NaN", math.NaN()),
		Entry("+Inf", math.Inf(1)),
		Entry("-Inf inside a map", map[string]any{"a": math.Inf(-1)}),
		Entry("a struct", struct{ A int }{1}),
		Entry("bytes", []byte("x")),
		Entry("a map with int keys", map[int]string{1: "a"}),
		Entry("a channel", make(chan int)),
		Entry("a string that is not UTF-8", "\xff"),
	)

	DescribeTable("Canonicalize refuses text that is not JSON it can write",
		func(in string) {
			_, err := dbfiles.Canonicalize([]byte(in))
			Expect(err).To(MatchError(dbfiles.ErrBadJSON))
		},
		Entry("empty", ""),
		Entry("two values", "1 2"),
		Entry("a trailing bracket", "[1]]"),
		Entry("a trailing comma", "[1,]"),
		Entry("single quotes", "{'a':1}"),
		Entry("NaN", "NaN"),
		Entry("a float beyond float64", "1e400"),
		Entry("invalid UTF-8 in a string", "\"\xff\""),
		Entry("a leading zero", "01"),
		Entry("a raw control character in a string", "\"a\x01\""),
	)

	It("writes Python's float repr at the notation boundaries", func() {
		for f, want := range map[float64]string{
			0.0001: "0.0001", 0.00001: "1e-05", 9999999999999998: "9999999999999998.0",
			1e16: "1e+16", 1.5e300: "1.5e+300", 5e-324: "5e-324", 123.456: "123.456", -2.5e-7: "-2.5e-07",
		} {
			Expect(dbfiles.PythonFloat(f)).To(Equal(want))
		}
	})
})

func ptr[T any](v T) *T { return &v }
