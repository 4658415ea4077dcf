package cli

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// readAll reads every row of in through a rowReader, with its line.
func readAll(in, name string) ([]recordstore.Row, []int, error) {
	r := newRowReader(strings.NewReader(in), name)
	var rows []recordstore.Row
	var lines []int
	for {
		row, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows, lines, nil
		}
		if err != nil {
			return nil, nil, err
		}
		rows, lines = append(rows, row), append(lines, line)
	}
}

var _ = Describe("rowReader", func() {
	It("keeps integers exact, objects and arrays as written, and skips blank lines", func() {
		in := `{"id": 9223372036854775807, "name": "a", "score": 1.5}` + "\n\n" +
			`  {"payload": {"b": 1, "a": [2, 3]}, "tags": [1], "none": null, "ok": true}  ` + "\r\n"
		rows, lines, err := readAll(in, "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(lines).To(Equal([]int{1, 3}))
		Expect(rows).To(Equal([]recordstore.Row{
			{"id": json.Number("9223372036854775807"), "name": "a", "score": json.Number("1.5")},
			{"payload": json.RawMessage(`{"b": 1, "a": [2, 3]}`), "tags": json.RawMessage(`[1]`), "none": nil, "ok": true},
		}))
	})

	It("decodes every kind of JSON value", func() {
		rows, _, err := readAll(`{"s":"a\"b\u00e9","t":true,"f":false,"n":null,"i":-12,"e":1e3,"o":{},"a":[]}`, "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(rows[0]).To(Equal(recordstore.Row{"s": "a\"bé", "t": true, "f": false, "n": nil,
			"i": json.Number("-12"), "e": json.Number("1e3"), "o": json.RawMessage(`{}`), "a": json.RawMessage(`[]`)}))
	})

	It("reads a last line without a newline", func() {
		rows, lines, err := readAll(`{"a":1}`+"\n"+`{"a":2}`, "f.ndjson")
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(2))
		Expect(lines).To(Equal([]int{1, 2}))
		Expect(rows[1]).To(Equal(recordstore.Row{"a": json.Number("2")}))
	})

	It("reads lines longer than its buffer", func() {
		long := strings.Repeat("x", 200<<10)
		rows, _, err := readAll(`{"s":"`+long+`"}`, "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(rows[0]["s"]).To(Equal(long))
	})

	DescribeTable("refuses bad input with ErrInvalid naming where",
		func(in, want string) {
			rows, _, err := readAll(in, "in.ndjson")
			Expect(rows).To(BeNil())
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
		Entry("a name twice in the row", `{"i":1,"i":2}`, `line 1: malformed JSON value: byte 8: name "i" appears twice in one object`),
		Entry("a name twice inside a value", `{"j":{"a":[{"b":1,"b":2}]}}`, `name "b" appears twice`),
		Entry("a string that is not UTF-8", "{\"s\":\"a\xffb\"}", "line 1: malformed JSON value: byte 8: string is not valid UTF-8"),
		Entry("a lone surrogate escape", `{"s":"\ud800"}`, `\ud800 is a lone UTF-16 surrogate`),
		Entry("a byte order mark past the start", "{\"a\":1}\n\ufeff{\"a\":2}", "line 2: want a JSON object"),
	)

	It("skips a byte order mark at the start of the input", func() {
		rows, lines, err := readAll("\ufeff{\"a\":1}\n{\"a\":2}", "stdin")
		Expect(err).NotTo(HaveOccurred())
		Expect(lines).To(Equal([]int{1, 2}))
		Expect(rows).To(Equal([]recordstore.Row{{"a": json.Number("1")}, {"a": json.Number("2")}}))
	})
})
