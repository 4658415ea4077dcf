package jsonx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore/internal/jsonx"
	"github.com/fb46ecde/records/recordstore/internal/jsonx/jsonxref"
)

var samples = []string{
	`{"k":1,"v":[1,2,3]}`, `{}`, `[]`, `[[[]]]`, `{"a":{"b":{"c":[]}}}`, ` {"a" : [ 1 , 2 ] } `,
	`"x"`, `"\u00e9\n\"\\"`, `-0.5e+10`, `0`, `true`, `false`, `null`, `1.5E-3`,
	`{"k":1,}`, `[1,]`, `{"k" 1}`, `{1:2}`, `[1 2]`, `01`, `-`, `1.`, `.5`, `1e`, `tru`, `nul`,
	`"\x"`, `"\u12g4"`, "\"a\x01b\"", `{"a":1}}`, `[`, `]`, `{`, `"`, ``, ` `, `{"a":[}`, `[}`, `{]`,
	"\"\xff\xfe\"", `[1,[2,[3,{"x":null}]]]`,
	`"\ud800"`, `"\udc00"`, `"\ud83d\ude00"`, `"\ud83d\u0041"`, `"\ud83d"`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
	`{"a":{"b":1},"b":{"a":1,"b":2,"a":3}}`, `[{"a":1},{"a":1}]`, `{"é":1,"\u00e9":2}`, `{"x":{"y":1},"x":2}`,
	"\"\xed\xa0\x80\"", `{"k1":1,"k2":1,"k3":1,"k4":1,"k5":1,"k6":1,"k7":1,"k8":1,"k9":1,"k10":1,"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":1,"k1":2}`,
}

func TestValidAgreesWithTheReference(t *testing.T) {
	for _, s := range append(samples, strings.Repeat("[", 10001)+strings.Repeat("]", 10001), strings.Repeat("[", 10000)+strings.Repeat("]", 10000)) {
		if got, want := jsonx.Valid([]byte(s)), jsonxref.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.40q) = %v, the reference says %v", s, got, want)
		}
	}
}

func TestCheckSaysWhereAndWhy(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"a":2}`, `byte 8: name "a" appears twice in one object`},
		{`{"a":1,"\u0061":2}`, `byte 8: name "\\u0061" appears twice in one object`},
		{`["x\ud800"]`, `byte 4: \ud800 is a lone UTF-16 surrogate`},
		{`"\udfff\ud800"`, `byte 2: \udfff is a lone UTF-16 surrogate`},
		{"[\"a\xff\"]", `byte 4: string is not valid UTF-8`},
		{`[1,]`, `byte 4: want a value, got ']'`},
		{`{"a":1} 2`, `byte 9: data after the value`},
	} {
		err := jsonx.Check([]byte(c.in))
		var se *jsonx.SyntaxError
		if !errors.As(err, &se) || err.Error() != c.want {
			t.Errorf("Check(%q) = %v, want %s", c.in, err, c.want)
		}
	}
}

func TestQuoteCutsLongInput(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	got := jsonx.Quote(long)
	if want := `"` + strings.Repeat("é", 100) + `"... (1200 bytes)`; got != want {
		t.Errorf("Quote of 1200 bytes = %s", got)
	}
	if got := jsonx.Quote("a\x00b"); got != `"a\x00b"` {
		t.Errorf("Quote of a short string = %s", got)
	}
}

func TestScanStopsAfterTheValue(t *testing.T) {
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
		got, err := jsonx.Scan([]byte(c.in), c.from)
		if err != nil {
			got = -1
		}
		if got != c.end {
			t.Errorf("Scan(%q, %d) = %d (%v), want %d", c.in, c.from, got, err, c.end)
		}
	}
}

func FuzzEnd(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := jsonx.Valid(b), jsonxref.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, the reference says %v", b, got, want)
		}
		start := jsonx.Space(b, 0)
		end, err := jsonx.Scan(b, start)
		if err != nil {
			var se *jsonx.SyntaxError
			if !errors.As(err, &se) || se.Offset < start || se.Offset > len(b) {
				t.Fatalf("Scan(%q) error %v is no SyntaxError within the input", b, err)
			}
			return
		}
		if !jsonxref.Valid(b[start:end]) {
			t.Fatalf("Scan(%q) = %d, but %q is not one JSON value", b, end, b[start:end])
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b[start:end]); err != nil || string(jsonx.AppendCompact(nil, b[start:end])) != want.String() {
			t.Fatalf("AppendCompact(%q) = %q, json.Compact gives %q (%v)", b[start:end], jsonx.AppendCompact(nil, b[start:end]), want.String(), err)
		}
	})
}

// Scan allocates nothing while the open brackets, names and objects fit
// its arrays, the package's promise, kept by the names helper taking and
// returning its spans rather than holding them.
func TestScanDoesNotAllocate(t *testing.T) {
	doc := []byte(`{"k":1,"v":[1,2,{"a":{"b":true,"c":[null]},"d":"x"}],"name":"host-a","ok":true,"e":{"f":1,"g":2}}`)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := jsonx.Scan(doc, 0); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Scan allocates %v times per call", n)
	}
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
