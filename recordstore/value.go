// Value normalization: what each column type accepts, and the exact value a
// backend stores for it. Direct appends and spooled batches both go through
// here, so a row stores the same bytes whichever way it travelled.

package recordstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

// Row is one row as callers pass it in: column name to value. Absent and nil
// mean null.
type Row map[string]any

// Values is a normalized row: one stored value per column of its kind, in
// column order. Each element is nil, string, int64 or float64 — exactly what
// the SQLite backend binds (bool as int64 0/1, datetime as DatetimeLayout
// text, json as compact JSON text, never the text null: a JSON null is nil).
type Values []any

// Normalize turns a caller's row into the stored values of kind k. It
// refuses, with ErrInvalid, an unknown column, a value of the wrong type, a
// missing required or key column.
func (k *Kind) Normalize(row Row) (Values, error) {
	out := make(Values, len(k.Columns))
	found := 0
	for i, c := range k.Columns {
		v, ok := row[c.Name]
		if ok {
			found++
		}
		nv, err := NormalizeValue(c, v)
		if err != nil {
			return nil, k.columnErr(c, err)
		}
		out[i] = nv
	}
	if found != len(row) {
		for name := range row {
			if k.ColumnIndex(name) < 0 {
				return nil, Invalidf("kind %s: unknown column %s", k.Name, Quote(name))
			}
		}
	}
	if err := k.CheckRequired(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (k *Kind) columnErr(c Column, err error) error {
	return Invalidf("kind %s: column %s (%s): %s", k.Name, c.Name, c.Type, InvalidText(err))
}

// CheckRequired returns an ErrInvalid error when a required or key column of
// vals is null.
func (k *Kind) CheckRequired(vals Values) error {
	for i, c := range k.Columns {
		if vals[i] == nil && (c.Required || k.isKey(c.Name)) {
			return Invalidf("kind %s: column %s is required", k.Name, c.Name)
		}
	}
	return nil
}

func (k *Kind) isKey(name string) bool {
	for _, n := range k.Key {
		if n == name {
			return true
		}
	}
	return false
}

// maxExactFloat is the largest magnitude up to which every integer is
// exactly representable as float64.
const maxExactFloat = 1 << 53

// NormalizeValue converts one value for column c into its stored form
// (see Values). nil stays nil; required-ness is checked by the caller. In a
// json column a JSON null — json.RawMessage("null"), or a Go value that
// encodes as null (a nil slice, map or pointer) — is nil too: a json column
// has one null, SQL NULL, whichever way the row came (see JSONNull).
func NormalizeValue(c Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case TypeString:
		return normString(v)
	case TypeInteger:
		return normInteger(v)
	case TypeNumber:
		return normNumber(v)
	case TypeBool:
		switch b := v.(type) {
		case bool:
			if b {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case TypeDatetime:
		return normDatetime(v)
	case TypeJSON:
		return normJSON(v)
	}
	return nil, Invalidf("want %s, got %T", c.Type, v)
}

// The norm functions return v itself when it is already in stored form:
// boxing the same value again would allocate.

func normString(v any) (any, error) {
	switch s := v.(type) {
	case string:
		if !utf8.ValidString(s) {
			// SQLite would store the bytes, but no spool codec can carry
			// them: refused here, a row is refused alike on every path.
			return nil, Invalidf("string is not valid UTF-8")
		}
		return v, nil
	case time.Time:
		return FormatDatetime(s), nil
	}
	return nil, Invalidf("want a string, got %s", describe(v))
}

func normInteger(v any) (any, error) {
	switch n := v.(type) {
	case int64:
		return v, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int8:
		return int64(n), nil
	case uint8:
		return int64(n), nil
	case uint16:
		return int64(n), nil
	case uint32:
		return int64(n), nil
	case uint:
		if uint64(n) > math.MaxInt64 {
			return nil, Invalidf("%d overflows int64", n)
		}
		return int64(n), nil
	case uint64:
		if n > math.MaxInt64 {
			return nil, Invalidf("%d overflows int64", n)
		}
		return int64(n), nil
	case float64:
		return integralFloat(n)
	case float32:
		return integralFloat(float64(n))
	case json.Number:
		return ParseIntegerText(string(n))
	}
	return nil, Invalidf("want an integer, got %s", describe(v))
}

// ParseIntegerText parses a JSON number literal as an exact int64. It
// accepts integral literals written with a fraction or exponent ("2.0",
// "1e3", "-0") when their exact decimal value is an integer in int64;
// "1.5" and "1e-400" are refused as not integers, "9223372036854775808"
// and "1e19" as outside int64.
func ParseIntegerText(s string) (any, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	d, ok := integerDigits(s)
	switch {
	case !ok:
		return nil, Invalidf("%s is not an integer", Quote(s))
	case d == "":
		return nil, Invalidf("%s is outside int64 (-9223372036854775808 to 9223372036854775807)", Quote(s))
	}
	n, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		return nil, Invalidf("%s is outside int64 (-9223372036854775808 to 9223372036854775807)", Quote(s))
	}
	return n, nil
}

// integerDigits returns the exact value of the number literal s as
// decimal integer text ("-12", "0"), ok false when s is not a number
// literal or its value is not an integer; the text is "" when the value
// has more than 20 digits (outside int64 for sure). It works on the
// digits, never through a float: 1e-400 is not 0.
func integerDigits(s string) (string, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	mant, exp := body, 0
	if i := strings.IndexAny(body, "eE"); i >= 0 {
		mant = body[:i]
		if !numberShape(mant, body[i+1:]) {
			return "", false
		}
		// An exponent larger than the literal is long decides alone:
		// the mantissa has too few digits to make up for it.
		e, err := strconv.Atoi(body[i+1:])
		if err != nil || e > len(body)+25 || e < -len(body)-25 {
			switch {
			case strings.Trim(mant, "0.") == "":
				return "0", true
			case body[i+1] == '-':
				return "", false // a fraction for sure
			}
			return "", true // far outside int64
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if !numberShape(mant, "0") || intPart == "" {
		return "", false
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0", true // -0, 0.000, 0e5
	}
	// the value is digits × 10^exp
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	if exp < 0 {
		return "", false // a fraction remains
	}
	if len(trimmed)+exp > 20 {
		return "", true
	}
	out := trimmed + strings.Repeat("0", exp)
	if neg {
		out = "-" + out
	}
	return out, true
}

// numberShape reports whether mant is digits with at most one '.' between
// digits and exp an optionally signed run of digits.
func numberShape(mant, exp string) bool {
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || hasDot && (frac == "" || !allDigits(frac)) {
		return false
	}
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	return exp != "" && allDigits(exp)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func integralFloat(f float64) (any, error) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, Invalidf("%v is not an integer", f)
	}
	if math.Abs(f) > maxExactFloat {
		return nil, Invalidf("%v is outside the exact integer range of a float; pass it as an integer", f)
	}
	return int64(f), nil
}

func normNumber(v any) (any, error) {
	var f float64
	switch n := v.(type) {
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, Invalidf("%v is not a finite number", n)
		}
		return v, nil
	case float32:
		f = float64(n)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		i, err := normInteger(v) // the integer column's rules: beyond int64 is refused
		if err != nil {
			return nil, err
		}
		f = float64(i.(int64))
	case json.Number:
		var err error
		if f, err = ParseNumberText(string(n)); err != nil {
			return nil, err
		}
	default:
		return nil, Invalidf("want a number, got %s", describe(v))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, Invalidf("%v is not a finite number", f)
	}
	return f, nil
}

// ParseNumberText parses a JSON number literal as the nearest float64. A
// literal beyond the float64 range ("1e400") is refused; one too small to
// tell from 0 ("1e-400") is 0, as rounding to the nearest float64 makes it.
func ParseNumberText(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, Invalidf("%s is outside the float64 range", Quote(s))
	}
	return 0, Invalidf("%s is not a number", Quote(s))
}

func normDatetime(v any) (any, error) {
	switch t := v.(type) {
	case time.Time:
		if secs := t.Unix(); secs < firstSecondYear0 || secs >= firstSecondYear10000 {
			return nil, Invalidf("datetime %v is outside years 0000-9999", t)
		}
		return FormatDatetime(t), nil
	case string:
		p, err := ParseDatetime(t)
		if err != nil {
			return nil, err
		}
		return p.Format(DatetimeLayout), nil
	}
	return nil, Invalidf("want an RFC 3339 datetime, got %s", describe(v))
}

func normJSON(v any) (any, error) {
	var raw []byte
	switch j := v.(type) {
	case json.RawMessage:
		raw = j
	default:
		if !utf8Strings(v) {
			return nil, Invalidf("a string in the value is not valid UTF-8")
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, Invalidf("value is not JSON-encodable: %v", err)
		}
		raw = b
	}
	s, err := CompactJSON(raw)
	if err != nil || JSONNull(s) {
		return nil, err
	}
	return s, nil
}

// JSONNull reports whether compact, compact JSON text (CompactJSON's), is
// the JSON value null. A json column stores no such text: every path that
// normalizes a value (NormalizeValue, the spool's decoders) stores SQL
// NULL for it, so that a reader sees one null. Rows stored before this
// rule may hold the text; they read back as json.RawMessage("null").
func JSONNull(compact string) bool { return compact == "null" }

// utf8Strings reports whether the strings of v, a Go value of the shapes
// encoding/json decodes into (string, map[string]any, []any and their
// string-typed cousins), and its map keys are all UTF-8: json.Marshal
// would turn the bytes of one that is not into U+FFFD, and the store
// refuses them instead, as it does in JSON text. Other types are left to
// json.Marshal.
func utf8Strings(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x)
	case []string:
		for _, s := range x {
			if !utf8.ValidString(s) {
				return false
			}
		}
	case map[string]string:
		for k, s := range x {
			if !utf8.ValidString(k) || !utf8.ValidString(s) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !utf8Strings(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !utf8Strings(e) {
				return false
			}
		}
	}
	return true
}

// CompactJSON checks raw as one JSON value (see CheckJSON) and returns its
// compact text: white space outside strings removed, nothing else changed.
func CompactJSON(raw []byte) (string, error) {
	if err := CheckJSON(raw); err != nil {
		return "", err
	}
	if !jsonx.HasSpace(raw) {
		return string(raw), nil // compact already
	}
	b := raw[jsonx.Space(raw, 0):]
	return string(jsonx.AppendCompact(make([]byte, 0, len(b)), b)), nil
}

// describe names a caller's value in an error message: its JSON kind, or
// for any other Go value its type and, when short, its JSON text
// ("int64 5", "time.Duration 1000").
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "a string"
	case bool:
		return "a bool"
	case json.Number:
		return "the number " + string(x)
	case float64, float32:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if b, err := json.Marshal(v); err == nil && len(b) < 40 {
		return fmt.Sprintf("%T %s", v, b)
	}
	return fmt.Sprintf("a value of type %T", v)
}

// Decode turns stored values of kind k back into a Row as readers see it:
// string, int64, float64, bool, time.Time (UTC) for datetime, and
// json.RawMessage for json. Null columns are present with a nil value.
func (k *Kind) Decode(vals Values) Row {
	row := make(Row, len(k.Columns))
	for i, c := range k.Columns {
		var v any
		if i < len(vals) {
			v = DecodeValue(c.Type, vals[i])
		}
		row[c.Name] = v
	}
	return row
}

// DecodeValue turns one stored value into its reader form (see Decode).
func DecodeValue(t ColumnType, v any) any {
	if v == nil {
		return nil
	}
	switch t {
	case TypeInteger:
		switch n := v.(type) {
		case float64:
			return int64(n)
		}
	case TypeNumber:
		switch n := v.(type) {
		case int64:
			return float64(n)
		}
	case TypeBool:
		switch n := v.(type) {
		case int64:
			return n != 0
		}
	case TypeDatetime:
		if s, ok := asString(v); ok {
			if tm, ok := ParseStoredDatetime(s); ok {
				return tm
			}
			if tm, err := ParseDatetime(s); err == nil {
				return tm
			}
			return s
		}
	case TypeJSON:
		if s, ok := asString(v); ok {
			return json.RawMessage(s)
		}
	case TypeString:
		if s, ok := asString(v); ok {
			return s
		}
	}
	return v
}

func asString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}
