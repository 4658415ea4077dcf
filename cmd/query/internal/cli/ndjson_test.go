package cli

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("decodeNDJSON", func() {
	It("keeps integers exact, objects and arrays as written, and skips blank lines", func() {
		in := `{"id": 9223372036854775807, "name": "a", "score": 1.5}` + "\n\n" +
			`  {"payload": {"b": 1, "a": [2, 3]}, "tags": [1], "none": null, "ok": true}  ` + "\r\n"
		got, err := decodeNDJSON(strings.NewReader(in), "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.name).To(Equal("stdin"))
		Expect(got.lines).To(Equal([]int{1, 3}))
		Expect(got.rows).To(Equal([]recordstore.Row{
			{"id": json.Number("9223372036854775807"), "name": "a", "score": json.Number("1.5")},
			{"payload": json.RawMessage(`{"b": 1, "a": [2, 3]}`), "tags": json.RawMessage(`[1]`), "none": nil, "ok": true},
		}))
	})

	It("decodes every kind of JSON value", func() {
		got, err := decodeNDJSON(strings.NewReader(`{"s":"a\"b\u00e9","t":true,"f":false,"n":null,"i":-12,"e":1e3,"o":{},"a":[]}`), "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.rows[0]).To(Equal(recordstore.Row{"s": "a\"bé", "t": true, "f": false, "n": nil,
			"i": json.Number("-12"), "e": json.Number("1e3"), "o": json.RawMessage(`{}`), "a": json.RawMessage(`[]`)}))
	})

	It("reads a last line without a newline", func() {
		got, err := decodeNDJSON(strings.NewReader(`{"a":1}`+"\n"+`{"a":2}`), "f.ndjson")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.rows).To(HaveLen(2))
		Expect(got.rows[1]).To(Equal(recordstore.Row{"a": json.Number("2")}))
	})

	It("reads lines longer than its buffer", func() {
		long := strings.Repeat("x", 200<<10)
		got, err := decodeNDJSON(strings.NewReader(`{"s":"`+long+`"}`), "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.rows[0]["s"]).To(Equal(long))
	})

	DescribeTable("refuses bad input with ErrInvalid naming where",
		func(in, want string) {
			got, err := decodeNDJSON(strings.NewReader(in), "in.ndjson")
			Expect(got.rows).To(BeNil())
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "got %v", err)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("empty input", "", "in.ndjson: no rows (empty input)"),
		Entry("only blank lines", "\n  \n\t\n", "no rows"),
		Entry("a truncated object", `{"a":1}`+"\n"+`{"a":`, "in.ndjson line 2: malformed JSON"),
		Entry("an array line", `[1,2]`, "line 1: want a JSON object"),
		Entry("a scalar line", `{"a":1}`+"\n\n"+`42`, "line 3: want a JSON object"),
		Entry("null", `null`, "line 1: want a JSON object"),
		Entry("two objects on a line", `{"a":1} {"a":2}`, "line 1: malformed JSON: invalid character '{' after top-level value"),
		Entry("garbage after the object", `{"a":1},`, "line 1: malformed JSON: invalid character ','"),
		Entry("a bad literal inside", `{"a":tru}`, "line 1: malformed JSON"),
	)
})
