package cli

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// valuesKind has a column of every type, a required one among them.
var valuesKind = recordstore.Kind{Name: "mix", Columns: []recordstore.Column{
	{Name: "id", Type: recordstore.TypeInteger, Required: true},
	{Name: "name", Type: recordstore.TypeString},
	{Name: "score", Type: recordstore.TypeNumber},
	{Name: "ok", Type: recordstore.TypeBool},
	{Name: "at", Type: recordstore.TypeDatetime},
	{Name: "detail", Type: recordstore.TypeJSON},
}}

// readOutcome is what reading a whole input yields: each row's values or
// the error that ended the read (its text), with the line.
type readOutcome struct {
	vals  []recordstore.Values
	lines []int
	err   string
}

// readValues reads in with NextValues.
func readValues(in string, k *recordstore.Kind) readOutcome {
	r, sc := newRowReader(strings.NewReader(in), "in.ndjson"), newValueScanner(k)
	var out readOutcome
	for {
		vals, line, err := r.NextValues(sc)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = fmt.Sprintf("%v (invalid: %v)", err, errors.Is(err, recordstore.ErrInvalid))
			return out
		}
		out.vals, out.lines = append(out.vals, vals), append(out.lines, line)
	}
}

// readRowsThenNormalize reads in with Next and normalizes each row, the
// way rows were read before NextValues.
func readRowsThenNormalize(in string, k *recordstore.Kind) readOutcome {
	r := newRowReader(strings.NewReader(in), "in.ndjson")
	var out readOutcome
	for {
		row, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err == nil {
			var vals recordstore.Values
			if vals, err = spool.Normalize(k, row); err == nil {
				out.vals, out.lines = append(out.vals, vals), append(out.lines, line)
				continue
			}
			err = fmt.Errorf("%s line %d: %w", r.name, line, err)
		}
		out.err = fmt.Sprintf("%v (invalid: %v)", err, errors.Is(err, recordstore.ErrInvalid))
		return out
	}
}

// valuesSeeds are inputs of every shape: good rows, each type refused,
// escapes, nulls, whitespace, a byte order mark, malformed JSON.
var valuesSeeds = []string{
	`{"id": 1, "name": "user-1", "score": 2.5, "ok": true, "at": "2026-12-01T10:00:00Z", "detail": {"a": [1, 2]}}`,
	`{"id":2,"name":"x\u00e9\"y","score":1e3,"ok":false,"at":"2026-12-01T10:00:00.5+01:00","detail":null}` + "\n\n",
	"\ufeff" + `{"id": 3}` + "\r\n" + `  {"id": 4, "detail": "text"}  ` + "\n",
	`{"id": 9223372036854775807, "score": 12345678901234567890}`,
	`{"id": 1.5}`,
	`{"id": "five"}`,
	`{"name": "no id"}`,
	`{"id": 1, "colour": 2}`,
	`{"id": 1, "id": 2}`,
	`{"id": 1, "ok": 1}`,
	`{"id": 1, "at": "yesterday"}`,
	`{"id": 1,`,
	`[1]`,
	`{"id": 1} {"id": 2}`,
	"{\"id\": 1, \"name\": \"a\xffb\"}",
	`{"id": 1, "name": "\ud800"}`,
	`{"id": 1, "detail": {"b": 1, "b": 2}}`,
	`{"id": 1, "score": -0, "name": ""}`,
	"{\"id\": 1}\f",
	`{"id": 1e2}`,
	``,
	"\n\n",
}

var _ = Describe("rowReader.NextValues", func() {
	It("reads every seed to the values and errors that Next followed by Normalize give", func() {
		for _, in := range valuesSeeds {
			Expect(readValues(in, &valuesKind)).To(Equal(readRowsThenNormalize(in, &valuesKind)), "input %q", in)
		}
	})

	It("keeps a json column's null a null column", func() {
		got := readValues(`{"id": 1, "detail": null}`+"\n"+`{"id": 2, "detail": "null"}`, &valuesKind)
		Expect(got.err).To(BeEmpty())
		Expect(got.vals[0][5]).To(BeNil())
		Expect(got.vals[1][5]).To(Equal(`"null"`))
	})

	It("reads a line longer than the read buffer", func() {
		long := strings.Repeat("x", 200_000)
		got := readValues(`{"id": 1}`+"\n"+`{"id": 2, "name": "`+long+`"}`+"\n"+`{"id": 3}`, &valuesKind)
		Expect(got.err).To(BeEmpty())
		Expect(got.lines).To(Equal([]int{1, 2, 3}))
		Expect(got.vals[1][1]).To(Equal(long))
	})
})

// FuzzNDJSONValues checks NextValues against Next followed by Normalize on
// any input: the same values, lines and errors, byte for byte.
func FuzzNDJSONValues(f *testing.F) {
	for _, s := range valuesSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, want := readValues(in, &valuesKind), readRowsThenNormalize(in, &valuesKind)
		// Normalize names the first unknown column it meets in the row, a
		// map: with several, each read may name another. Read again.
		for try := 0; try < 50 && got.err != want.err && strings.Contains(want.err, "unknown column"); try++ {
			want = readRowsThenNormalize(in, &valuesKind)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q:\nNextValues:          %#v\nNext and Normalize: %#v", in, got, want)
		}
	})
}
