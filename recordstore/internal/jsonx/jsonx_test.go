package jsonx_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

var samples = []string{
	`{"k":1,"v":[1,2,3]}`, `{}`, `[]`, `[[[]]]`, `{"a":{"b":{"c":[]}}}`, ` {"a" : [ 1 , 2 ] } `,
	`"x"`, `"\u00e9\n\"\\"`, `-0.5e+10`, `0`, `true`, `false`, `null`, `1.5E-3`,
	`{"k":1,}`, `[1,]`, `{"k" 1}`, `{1:2}`, `[1 2]`, `01`, `-`, `1.`, `.5`, `1e`, `tru`, `nul`,
	`"\x"`, `"\u12g4"`, "\"a\x01b\"", `{"a":1}}`, `[`, `]`, `{`, `"`, ``, ` `, `{"a":[}`, `[}`, `{]`,
	"\"\xff\xfe\"", `[1,[2,[3,{"x":null}]]]`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range append(samples, strings.Repeat("[", 10001)+strings.Repeat("]", 10001), strings.Repeat("[", 10000)+strings.Repeat("]", 10000)) {
		if got, want := jsonx.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

func TestEndStopsAfterTheValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		from int
		end  int
	}{
		{`{"k":1},"next"`, 0, 7},
		{`x:[1,2] ,`, 2, 7},
		{`"a\"b" rest`, 0, 6},
		{`123,4`, 0, 3},
		{`true}`, 0, 4},
		{`[1,2`, 0, -1},
		{`{"a":}`, 0, -1},
	} {
		if got := jsonx.End([]byte(c.in), c.from); got != c.end {
			t.Errorf("End(%q, %d) = %d, want %d", c.in, c.from, got, c.end)
		}
	}
}

func FuzzEnd(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := jsonx.Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
		start := jsonx.Space(b, 0)
		if end := jsonx.End(b, start); end >= 0 && !json.Valid(b[start:end]) {
			t.Fatalf("End(%q) = %d, but %q is not one JSON value", b, end, b[start:end])
		}
	})
}

func BenchmarkValid(b *testing.B) {
	doc := []byte(`{"k":1,"v":[1,2,3],"name":"host-a.example.org","ok":true}`)
	b.Run("jsonx", func(b *testing.B) {
		for b.Loop() {
			if !jsonx.Valid(doc) {
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
