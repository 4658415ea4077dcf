// Value normalization: what each column type accepts, and the exact value a
// backend stores for it. Direct appends and spooled batches both go through
// here, so a row stores the same bytes whichever way it travelled.

package recordstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// DatetimeLayout is the stored form of a datetime: fixed-width UTC text with
// microseconds, so that text order is time order.
const DatetimeLayout = "2006-01-02T15:04:05.000000Z"

// Row is one row as callers pass it in: column name to value. Absent and nil
// mean null.
type Row map[string]any

// Values is a normalized row: one stored value per column of its kind, in
// column order. Each element is nil, string, int64 or float64 — exactly what
// the SQLite backend binds (bool as int64 0/1, datetime as DatetimeLayout
// text, json as compact JSON text).
type Values []any

// FormatDatetime renders t in the stored datetime form (UTC, microseconds).
func FormatDatetime(t time.Time) string {
	secs := t.Unix()
	if secs < firstSecondYear1 || secs >= firstSecondYear10000 {
		return t.UTC().Truncate(time.Microsecond).Format(DatetimeLayout)
	}
	// DatetimeLayout by hand, the date from the day number in one go:
	// time.Format interprets the layout, and Date and Clock each start
	// over from the instant.
	days, sod := secs/86400, secs%86400
	if sod < 0 {
		days, sod = days-1, sod+86400
	}
	year, month, day := civilDate(days)
	var b [len(DatetimeLayout)]byte
	put := func(i, n, digits int) {
		for j := i + digits - 1; j >= i; j-- {
			b[j] = byte('0' + n%10)
			n /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, month, 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, int(sod/3600), 2)
	b[13] = ':'
	put(14, int(sod/60%60), 2)
	b[16] = ':'
	put(17, int(sod%60), 2)
	b[19] = '.'
	put(20, t.Nanosecond()/1000, 6)
	b[26] = 'Z'
	return string(b[:])
}

// Unix seconds of the first instants of years 0, 1 and 10000 (UTC).
const (
	firstSecondYear0     = -62167219200
	firstSecondYear1     = -62135596800
	firstSecondYear10000 = 253402300800
)

// civilDate returns the proleptic Gregorian date of the day days after
// 1970-01-01, for days from year 1 on (days counted in 400-year eras from
// March 1 of year 0, so that the leap day ends a year).
func civilDate(days int64) (year, month, day int) {
	z := days + 719468 // days since 0000-03-01; positive from year 1 on
	era := z / 146097
	doe := z - era*146097                                  // day of the era, 0..146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era, 0..399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the year from March 1, 0..365
	mp := (5*doy + 2) / 153                                // month from March, 0..11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

// ParseDatetime parses RFC 3339 text (with or without fractional seconds)
// and returns it as UTC truncated to microseconds.
func ParseDatetime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, Invalidf("datetime %q is not RFC 3339", s)
	}
	t = t.UTC().Truncate(time.Microsecond)
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, Invalidf("datetime %q is outside years 0000-9999", s)
	}
	return t, nil
}

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
				return nil, Invalidf("kind %s: unknown column %q", k.Name, name)
			}
		}
	}
	if err := k.CheckRequired(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (k *Kind) columnErr(c Column, err error) error {
	return Invalidf("kind %s: column %s (%s): %s", k.Name, c.Name, c.Type, trimInvalid(err))
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

func trimInvalid(err error) string {
	s := err.Error()
	const p = "invalid: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// maxExactFloat is the largest magnitude up to which every integer is
// exactly representable as float64.
const maxExactFloat = 1 << 53

// NormalizeValue converts one value for column c into its stored form
// (see Values). nil stays nil; required-ness is checked by the caller.
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
// "1e3") only when they are exactly representable; "1.5" is refused.
func ParseIntegerText(s string) (any, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, Invalidf("%s is not an integer", s)
	}
	return integralFloat(f)
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
		if f, err = strconv.ParseFloat(string(n), 64); err != nil {
			return nil, Invalidf("%s is not a number", n)
		}
	default:
		return nil, Invalidf("want a number, got %s", describe(v))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, Invalidf("%v is not a finite number", f)
	}
	return f, nil
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
		b, err := json.Marshal(v)
		if err != nil {
			return nil, Invalidf("value is not JSON-encodable: %v", err)
		}
		raw = b
	}
	return CompactJSON(raw)
}

// CompactJSON validates raw as one JSON value and returns its compact text.
func CompactJSON(raw []byte) (string, error) {
	if len(raw) > 0 && !hasJSONSpace(raw) {
		// Nothing to remove: compact already, if it is valid at all.
		if validJSON(raw) {
			return string(raw), nil
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return "", Invalidf("malformed JSON value: %v", err)
	}
	if buf.Len() == 0 {
		return "", Invalidf("empty JSON value")
	}
	return buf.String(), nil
}

// hasJSONSpace reports whether raw holds a byte that JSON counts as
// white space (inside strings too: then Compact decides).
func hasJSONSpace(raw []byte) bool {
	for _, c := range raw {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
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
			if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return tm.UTC()
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
