// Fuzz targets of package spool (listed in doc.go and FUZZ_TARGETS). Seed
// corpora live in testdata/fuzz/<FuzzName>/.

package spool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/jsonx/jsonxref"
	"github.com/fb46ecde/records/recordstore/spool"
)

// FuzzScanLine checks the schema-aware scanner differentially against
// encoding/json plus Normalize: the same values, or both an error.
func FuzzScanLine(f *testing.F) {
	for _, s := range []string{`{}`, `{"s":"a","i":1,"n":1.5,"b":true,"d":"2024-01-02T03:04:05Z","j":{"a":[1,null]}}`,
		`{"s":"\ud83d\ude00\u00e9","i":-9223372036854775808}`, `{"j":null}`, `{"i":1e3,"n":-0}`,
		`{"d":"2024-02-29T23:59:59.999999Z","s":"a\"b"}`, `{"d":"2023-02-29T00:00:00.000000Z"}`, `{"d":"0000-01-01T00:00:00.000000Z"}`,
		`{"\u0073":"escaped key","i":1}`, `{"i":1,"s":"x","s":"twice"}`, `{"s" :"x", "i":2}`, `{"s":"x","i"}`, `{"sx":1}`} {
		f.Add([]byte(s))
	}
	kind := allTypes()
	f.Fuzz(func(t *testing.T, line []byte) {
		want, werr := referenceDecode(kind, line)
		got, gerr := spool.ScanLine(kind, line)
		if werr != nil {
			if gerr == nil {
				t.Fatalf("reference refused %q (%v); scanner returned %#v", line, werr, got)
			}
			if !errors.Is(gerr, recordstore.ErrInvalid) {
				t.Fatalf("scanner error %v does not wrap ErrInvalid", gerr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("reference accepted %q as %#v; scanner: %v", line, want, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q: scanner %#v, reference %#v", line, got, want)
		}
	})
}

// decodeAll reads every row of data with codec, within lim.
func decodeAll(codec spool.Codec, kind *recordstore.Kind, data []byte, lim spool.Limits) ([]recordstore.Values, error) {
	dec, err := codec.NewDecoder(bytes.NewReader(data), int64(len(data)), kind, lim)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	var out []recordstore.Values
	for {
		v, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// encodeAll writes rows with codec.
func encodeAll(codec spool.Codec, kind *recordstore.Kind, rows []recordstore.Values) ([]byte, error) {
	var buf bytes.Buffer
	enc, err := codec.NewEncoder(&buf, kind)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := enc.Write(r); err != nil {
			return nil, err
		}
	}
	err = enc.Close()
	return buf.Bytes(), err
}

// FuzzNDJSONDecode decodes a whole ndjson file: it must never panic, must
// fail only with ErrInvalid or ErrCapacity, and whatever it decodes must
// encode and decode again to the same values.
func FuzzNDJSONDecode(f *testing.F) {
	f.Add([]byte("{\"s\":\"a\"}\n{\"i\":1}\n"))
	f.Add([]byte("\n \n{\"j\":[1,2]}"))
	f.Add([]byte("{\"s\":\"a\"}\r\n{\"b\":true}\r\n"))
	fuzzCodec(f, spool.FormatNDJSON)
}

// FuzzNDJSONGzDecode decodes a whole ndjson.gz file under a byte cap: a
// corrupt, truncated or inflating input must fail cleanly (ErrInvalid,
// ErrCapacity) without reading past the cap.
func FuzzNDJSONGzDecode(f *testing.F) {
	for _, s := range []string{"{\"s\":\"a\"}\n{\"i\":1}\n", "", "{\"j\":[" + string(bytes.Repeat([]byte("1,"), 500)) + "1]}\n"} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		f.Add(buf.Bytes())
	}
	fuzzCodec(f, spool.FormatNDJSONGz)
}

func fuzzCodec(f *testing.F, format string) {
	codec, err := spool.Lookup(format)
	if err != nil {
		f.Fatal(err)
	}
	kind := allTypes()
	lim := spool.Limits{MaxRows: 1000, MaxBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := decodeAll(codec, kind, data, lim)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) && !errors.Is(err, recordstore.ErrCapacity) {
				t.Fatalf("decode error %v wraps neither ErrInvalid nor ErrCapacity", err)
			}
			return
		}
		again, err := encodeAll(codec, kind, rows)
		if err != nil {
			t.Fatalf("decoded rows do not encode: %v", err)
		}
		back, err := decodeAll(codec, kind, again, spool.Limits{})
		if err != nil {
			t.Fatalf("re-encoded rows do not decode: %v", err)
		}
		if len(rows) == 0 && len(back) == 0 {
			return
		}
		if !reflect.DeepEqual(back, rows) {
			t.Fatalf("round trip changed rows:\n%#v\n%#v", rows, back)
		}
	})
}

// FuzzManifest decodes and validates a manifest: it must never panic,
// must fail only with ErrInvalid, an accepted manifest must decode the
// same a second time (its schemas then come from DecodeManifest's cache),
// and it must encode and decode to itself.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"id":"0123456789abcdef0123456789abcdef","producer":{"instance":"0123456789abcdef","seq":1,"pid":1,"host":"h","build":"b"},"created":"2024-01-02T03:04:05.000000006Z","schemas":[{"name":"kv","columns":[{"name":"k","type":"string"}]}],"entries":[{"op":"append","stream":"s","kind":"kv","rows":0,"bytes":0},{"op":"expire","stream":"s","ttl":"1h","rows":0,"bytes":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := spool.DecodeManifest(data)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("manifest error %v does not wrap ErrInvalid", err)
			}
			return
		}
		// A second decode of the same text takes the schemas from the
		// cache: it must give the same manifest.
		if again, err := spool.DecodeManifest(data); err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("second decode differs (%v):\n%#v\n%#v", err, m, again)
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("accepted manifest does not encode: %v", err)
		}
		m2, err := spool.DecodeManifest(enc)
		if err != nil {
			t.Fatalf("re-encoded manifest refused: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("manifest changed in a round trip:\n%#v\n%#v", m, m2)
		}
	})
}

// FuzzEncodeValue checks the value encoder's fast paths against
// encoding/json and strconv: a string encodes to JSON text that decodes
// back to it (or is refused when not UTF-8), a finite number to the text
// of strconv's shortest 'g', a JSON column value to its json.Compact form
// (or is refused when the store's JSON rules, as package jsonxref checks
// them, refuse it).
func FuzzEncodeValue(f *testing.F) {
	f.Add("plain", 0.5, `{"k":1,"v":[1,2,3]}`)
	f.Add("quote \" back \\ nl \n ctl \x01 ü 😀 \u2028", -1e6, " [1, {\"a\" : null}] ")
	f.Add("bad \xff utf8", math.Copysign(0, -1), `{"a":1,}`)
	f.Add("", 999999.0, `"s"`)
	f.Fuzz(func(t *testing.T, s string, n float64, j string) {
		got, err := spool.AppendValue(recordstore.TypeString, s)
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("string %q is not UTF-8 but encoded as %s", s, got)
			}
		} else {
			var back string
			if err != nil || json.Unmarshal(got, &back) != nil || back != s {
				t.Fatalf("string %q encoded as %s (%v), decodes to %q", s, got, err, back)
			}
		}
		got, err = spool.AppendValue(recordstore.TypeNumber, n)
		if math.IsInf(n, 0) || math.IsNaN(n) {
			if err == nil {
				t.Fatalf("number %v encoded as %s", n, got)
			}
		} else if want := strconv.FormatFloat(n, 'g', -1, 64); err != nil || string(got) != want {
			t.Fatalf("number %v encoded as %s (%v), want %s", n, got, err, want)
		}
		got, err = spool.AppendValue(recordstore.TypeJSON, j)
		if !jsonxref.Valid([]byte(j)) {
			if err == nil {
				t.Fatalf("json %q is not valid but encoded as %s", j, got)
			}
			return
		}
		var want bytes.Buffer
		if cerr := json.Compact(&want, []byte(j)); cerr != nil || err != nil || string(got) != want.String() {
			t.Fatalf("json %q encoded as %s (%v), json.Compact gives %s (%v)", j, got, err, want.String(), cerr)
		}
	})
}

// batchNameRE is the documented batch folder name, as a regular expression:
// the reference FuzzBatchName checks ParseBatchName against.
var batchNameRE = regexp.MustCompile(`^([0-9]{20})-([0-9a-f]{16})-([0-9]{12})-([0-9a-f]{32})$`)

// FuzzBatchName checks ParseBatchName, which reads the names of whatever
// is in a spool folder, against the documented form: it accepts exactly
// the names the reference accepts (created fitting in int64, seq >= 1),
// and what it accepts renders back to the same name.
func FuzzBatchName(f *testing.F) {
	f.Add("00000001796007464083-0123456789abcdef-000000000001-0123456789abcdef0123456789abcdef")
	f.Add("09223372036854775807-0123456789abcdef-999999999999-ffffffffffffffffffffffffffffffff")
	f.Add("09223372036854775808-0123456789abcdef-000000000001-0123456789abcdef0123456789abcdef")
	f.Add("00000001796007464083-0123456789abcdef-000000000000-0123456789abcdef0123456789abcdef")
	f.Add("00000001796007464083-0123456789ABCDEF-000000000001-0123456789abcdef0123456789abcdef")
	f.Add("0000000179600746408-30123456789abcdef-000000000001-0123456789abcdef0123456789abcdef")
	f.Add("-0000000179600746408-0123456789abcdef-000000000001-0123456789abcdef0123456789abcdef")
	f.Add("00000001796007464083-0123456789abcdef-000000000001-0123456789abcdef0123456789abcde")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := spool.ParseBatchName(s)
		want := false
		if m := batchNameRE.FindStringSubmatch(s); m != nil {
			_, cerr := strconv.ParseInt(m[1], 10, 64)
			seq, _ := strconv.ParseInt(m[3], 10, 64)
			want = cerr == nil && seq >= 1
		}
		if (err == nil) != want {
			t.Fatalf("ParseBatchName(%q) error %v, want accepted=%v", s, err, want)
		}
		if err != nil {
			if !errors.Is(err, spool.ErrBadBatchName) {
				t.Fatalf("ParseBatchName(%q) error %v is not ErrBadBatchName", s, err)
			}
			return
		}
		if got := n.String(); got != s {
			t.Fatalf("ParseBatchName(%q).String() = %q", s, got)
		}
	})
}
