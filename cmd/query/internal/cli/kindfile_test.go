// Specs and a fuzz target for the kind file reader: its messages name the
// kind, column and field, and stay short whatever the input.

package cli

import (
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("decodeKindFile", func() {
	const good = `{"name":"jobs","columns":[{"name":"id","type":"string","required":true}],"key":["id"]}`

	It("reads the kinds of a file that starts with a UTF-8 byte order mark", func() {
		kinds, err := decodeKindFile([]byte("\xEF\xBB\xBF" + `{"kinds":[` + good + `]}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds).To(HaveLen(1))
		Expect(kinds[0].Name).To(Equal("jobs"))
	})

	DescribeTable("says which kind, which field and what was expected",
		func(src, says string) {
			_, err := decodeKindFile([]byte(src))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(Equal(says))
		},
		Entry("empty input", "", `empty input (want {"kinds": [...]})`),
		Entry("only blanks and a byte order mark", "\xEF\xBB\xBF \n\t", `empty input (want {"kinds": [...]})`),
		Entry("no kinds", `{"kinds":[]}`, `no kinds (want {"kinds": [...]})`),
		Entry("not JSON", `kinds: []`, "not valid JSON at byte 1: invalid character 'k' looking for beginning of value"),
		Entry("JSON cut short", `{"kinds":[`+good, "the JSON ends early"),
		Entry("a list instead of the object", `[]`, "want an object, got array"),
		Entry("kinds that is not a list", `{"kinds":{}}`, "field kinds: want a list, got object"),
		Entry("an unknown top-level field", `{"kinds":[`+good+`],"kind":1}`, `unknown field "kind"`),
		Entry("data after the object", `{"kinds":[`+good+`]} {}`, "extra data after the JSON object"),
		Entry("a string for a column's required flag",
			`{"kinds":[`+good+`,{"name":"b","columns":[{"name":"x","type":"string"},{"name":"y","type":"string","required":"yes"}]}]}`,
			`kind 2 ("b"): column 2 ("y"): field required: want true or false, got string`),
		Entry("an unknown field of a column",
			`{"kinds":[{"name":"b","columns":[{"name":"x","type":"string","nullable":true}]}]}`,
			`kind 1 ("b"): column 1 ("x"): unknown field "nullable"`),
		Entry("an unknown field of a kind", `{"kinds":[{"name":"b","colums":[]}]}`, `kind 1 ("b"): unknown field "colums"`),
		Entry("a kind without a string name", `{"kinds":[{"name":7}]}`, `kind 1: field name: want a string, got number`),
		Entry("a key that is not a list", `{"kinds":[{"name":"b","columns":[],"key":"id"}]}`, `kind 1 ("b"): field key: want a list, got string`),
		Entry("a bare-number ttl", `{"kinds":[{"name":"b","columns":[],"retention":{"mode":"stream","ttl":86400}}]}`,
			`kind 1 ("b"): retention: invalid: ttl 86400: want text like "24h"`),
		Entry("an unknown field of lww", `{"kinds":[{"name":"b","columns":[],"lww":{"version":"v","tie":"t"}}]}`,
			`kind 1 ("b"): lww: unknown field "tie"`),
		Entry("a kind named twice", `{"kinds":[`+good+`,`+good+`]}`, `kinds 1 and 2 are both named "jobs"`),
	)

	It("quotes at most 200 bytes of a huge name, with its length", func() {
		huge := strings.Repeat("n", 1<<20)
		_, err := decodeKindFile([]byte(`{"kinds":[{"name":"` + huge + `","columns":[],"extra":1}]}`))
		Expect(err).To(HaveOccurred())
		Expect(len(err.Error())).To(BeNumerically("<", 400))
		Expect(err.Error()).To(ContainSubstring("... (1048576 bytes)"))
		_, err = decodeKindFile([]byte(`{"kinds":[{"name":"b","columns":[],"` + huge + `":1}]}`))
		Expect(err).To(HaveOccurred())
		Expect(len(err.Error())).To(BeNumerically("<", 400))
		k := recordstore.Kind{Name: "b", Columns: []recordstore.Column{{Name: huge, Type: recordstore.TypeString}}}
		err = k.Validate()
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(len(err.Error())).To(BeNumerically("<", 400))
	})
})

// FuzzKindFile checks decodeKindFile on any input: it never panics, and
// its error messages stay short however long the input's names and
// values are (quoted input is cut at 200 bytes).
func FuzzKindFile(f *testing.F) {
	f.Add([]byte(`{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"string","required":true}],"key":["id"]}]}`))
	f.Add([]byte("\xEF\xBB\xBF" + `{"kinds":[{"name":"b","columns":[{"name":"y","type":"string","required":"yes"}]}]}`))
	f.Add([]byte(`{"kinds":[{"name":"b","columns":[],"retention":{"mode":"stream","ttl":86400}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		kinds, err := decodeKindFile(data)
		if err != nil {
			if len(err.Error()) > 2000 {
				t.Fatalf("a %d-byte message for a %d-byte input: %.300s", len(err.Error()), len(data), err)
			}
			return
		}
		if len(kinds) == 0 {
			t.Fatalf("no error and no kinds")
		}
	})
}
