// validJSON against the reference (encoding/json plus the store's three
// refusals): the same answer for every input.

package recordstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore/internal/jsonx/jsonxref"
)

// jsonValidSeeds are inputs at the edges of the grammar.
var jsonValidSeeds = []string{
	``, ` `, `null`, `nul`, `nulll`, `true`, `tru`, `false`, `0`, `-0`, `-`, `01`, `1.`, `.5`, `1.5`,
	`1e`, `1e+`, `1e+5`, `1E-05`, `-1.25e3`, `2.`, `0.0e0`, `+1`, `"`, `""`, `"a\"b"`, `"\u00e9"`,
	`"\u00g9"`, `"\u12"`, `"\x"`, "\"\x01\"", "\"\xff\xfe\"", `"\/\b\f\n\r\t"`, `{}`, `{ }`, `[]`,
	`[ ]`, `[1,]`, `[,1]`, `[1 2]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`,
	`{"k":1,"v":[1,2,3]}`, ` {"a" : [true, false, null], "b": {"c": "d"}} `, `[[[[]]]]`, `[[[]]`,
	`{"a":{"b":[}]}`, `1 2`, "\t[1]\n", `{"":""}`, `[1]]`, `}`, `"unterminated`, `[1e400]`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	`"\ud800"`, `"\udbff\udfff"`, `"\udc00\ud800"`, `{"a":1,"a":1}`, `{"a":{"a":{"b":1,"b":2}}}`, `{"\/":1,"/":2}`,
}

func TestValidJSONAgreesWithTheReference(t *testing.T) {
	for _, s := range jsonValidSeeds {
		if got, want := validJSON([]byte(s)), jsonxref.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.40q) = %v, the reference says %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range jsonValidSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), jsonxref.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, the reference says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	doc := []byte(`{"k":1,"v":[1,2,3],"name":"host-a.example.org","ok":true}`)
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			if !validJSON(doc) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
}
