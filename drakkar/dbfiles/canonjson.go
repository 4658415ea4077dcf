// Canonical JSON (notes §4): the one byte form of a JSON value that
// Python's json.dumps(v, sort_keys=True, separators=(",", ":"),
// ensure_ascii=False) writes, so that an object written by a Go worker and
// by a Python worker is the same bytes.

package dbfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
)

// CanonicalJSON encodes a Go value canonically: object keys sorted by code
// point, separators "," and ":" without spaces, strings in raw UTF-8 (only
// '"', '\\' and the control characters below U+0020 escaped; U+2028,
// U+2029, '<', '>', '&' written raw), no trailing newline.
//
// It takes nil, bool, string, json.Number, every int and uint width,
// float32 and float64, maps with string keys, slices and arrays of these,
// and pointers and interfaces holding them. A float is written in Python's
// repr: "100.0", "0.1", "1e-05", "1e+16". NaN, ±Inf, structs, []byte and
// any other type are ErrUnsupported; a string that is not UTF-8 is
// ErrUnsupported too.
func CanonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var numberType = reflect.TypeFor[json.Number]()

func encodeValue(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	if v.Type() == numberType {
		return encodeNumber(b, v.String())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeValue(b, v.Elem())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.String:
		return encodeString(b, v.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		s, err := PythonFloat(v.Float())
		if err != nil {
			return err
		}
		b.WriteString(s)
	case reflect.Map:
		return encodeMap(b, v)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return recordstore.Errorf(ErrUnsupported, "%s", v.Type())
		}
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return recordstore.Errorf(ErrUnsupported, "%s", v.Type())
	}
	return nil
}

func encodeMap(b *bytes.Buffer, v reflect.Value) error {
	if v.Type().Key().Kind() != reflect.String {
		return recordstore.Errorf(ErrUnsupported, "%s", v.Type())
	}
	if v.IsNil() {
		b.WriteString("null")
		return nil
	}
	keys := v.MapKeys()
	// Byte order of UTF-8 is code point order, which is Python's sort.
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeString(b, k.String()); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encodeValue(b, v.MapIndex(k)); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// encodeString writes s as Python's json.dumps with ensure_ascii=False
// does: \" \\ \n \r \t \b \f, other control characters as \u00xx
// (lowercase hex), everything else raw.
func encodeString(b *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return recordstore.Errorf(ErrUnsupported, "string is not UTF-8")
	}
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return nil
}

// PythonFloat is Python's repr of a float: the shortest digits that read
// back as f, in fixed notation with at least one fractional digit when the
// decimal exponent is from -4 to 15 ("100.0", "0.0001"), otherwise in
// exponent notation with a sign and at least two exponent digits ("1e-05",
// "1e+16", "1.5e+300"). NaN and ±Inf are ErrUnsupported.
func PythonFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", recordstore.Errorf(ErrUnsupported, "float %v", f)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX, shortest digits
	exp, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if err != nil {
		return "", recordstore.Errorf(ErrUnsupported, "float %v", f)
	}
	if exp < -4 || exp >= 16 {
		return e, nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s, nil
}

// encodeNumber writes JSON number text canonically: an integer (no '.',
// 'e' or 'E') exactly, through math/big ("-0" is "0", as Python's int);
// any other number as the Python repr of the float64 it reads as.
func encodeNumber(b *bytes.Buffer, text string) error {
	if !strings.ContainsAny(text, ".eE") {
		n, ok := new(big.Int).SetString(text, 10)
		if !ok {
			return recordstore.Errorf(ErrBadJSON, "number %q", text)
		}
		b.WriteString(n.String())
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil { // out of range: Python reads it as inf, which has no JSON form
		return recordstore.Errorf(ErrBadJSON, "number %q: %w", text, err)
	}
	s, err := PythonFloat(f)
	if err != nil {
		return recordstore.Errorf(ErrBadJSON, "number %q", text)
	}
	b.WriteString(s)
	return nil
}

// Canonicalize re-encodes any JSON text canonically (see CanonicalJSON).
// Integers stay exact whatever their size; a number with '.' or an
// exponent is a float and is written in Python's repr. When an object has
// a key twice, the last value wins, as in Python's json.loads. Leading and
// trailing white space is allowed. Text that is not valid JSON, not UTF-8,
// or holds a float beyond float64's range is ErrBadJSON. A \ud800-style
// escape of a lone surrogate reads as U+FFFD (Go's rule; Python would keep
// the surrogate and then fail to write it as UTF-8).
func Canonicalize(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, recordstore.Errorf(ErrBadJSON, "not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, recordstore.Errorf(ErrBadJSON, "%w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, recordstore.Errorf(ErrBadJSON, "data after the value")
	}
	out, err := CanonicalJSON(v)
	if err != nil {
		return nil, recordstore.Errorf(ErrBadJSON, "%w", err)
	}
	return out, nil
}
