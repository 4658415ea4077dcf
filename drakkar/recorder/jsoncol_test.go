// Specs of the JSON columns' bytes and of reading a ts back. Inside the
// package, since the helpers are unexported.

package recorder

import (
	"encoding/json"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

var _ = Describe("canonical JSON", func() {
	DescribeTable("writes one byte form",
		func(v any, want string) {
			got, err := canonicalJSON(v)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))
		},
		Entry("sorted keys, no spaces", map[string]any{"b": 1, "a": []any{true, nil}}, `{"a":[true,null],"b":1}`),
		Entry("raw UTF-8, U+2028 and U+2029 raw, no HTML escapes", "é<>&\u2028\u2029", "\"é<>&\u2028\u2029\""),
		Entry("control characters escaped as Python does", "a\"\\\n\r\t\b\f\x01\x7f", `"a\"\\\n\r\t\b\f\u0001`+"\x7f\""),
		Entry("invalid UTF-8 becomes U+FFFD", "a\xffb", "\"a\uFFFDb\""),
		Entry("integral float keeps .0", 100.0, `100.0`),
		Entry("small float in exponent form", 0.00001, `1e-05`),
		Entry("float of 1e16 in exponent form", 1e16, `1e+16`),
		Entry("float below 1e16 in fixed form", 1234567890123456.0, `1234567890123456.0`),
		Entry("shortest digits", 0.1, `0.1`),
		Entry("zero and negative zero as Python writes them", []any{0.0, math.Copysign(0, -1)}, `[0.0,-0.0]`),
		Entry("json.Number integer kept", json.Number("-12"), `-12`),
		Entry("json.Number beyond int64 kept as an integer, as Python keeps it", json.Number("12345678901234567890"), `12345678901234567890`),
		Entry("json.Number float in Python form", json.Number("1E2"), `100.0`),
		Entry("raw message re-encoded", json.RawMessage(`{ "z" : 1.50, "a":"x" }`), `{"a":"x","z":1.5}`),
		Entry("time in the canonical datetime format", time.Date(2026, 7, 5, 12, 34, 56, 123456789, time.FixedZone("x", 3600)), `"2026-07-05T11:34:56.123456Z"`),
		Entry("map of strings", map[string]string{"y": "1", "x": "2"}, `{"x":"2","y":"1"}`),
		Entry("struct through encoding/json", struct {
			B int    `json:"b"`
			A string `json:"a"`
		}{1, "<"}, `{"a":"<","b":1}`),
	)

	It("refuses NaN", func() {
		_, err := canonicalJSON(map[string]any{"x": math.NaN()})
		Expect(err).To(HaveOccurred())
	})
})

var _ = Describe("reading a ts back", func() {
	It("gives the microsecond it was written from", func() {
		for _, us := range []int64{0, 1, 499999, 500000, 999999} {
			t := time.Date(2026, 1, 2, 3, 4, 5, int(us)*1000, time.UTC)
			Expect(timeOfTS(dbfiles.TS(t))).To(Equal(t))
		}
	})
})
