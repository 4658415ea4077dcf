// Stand-ins for the drakkar/dbfiles helpers this package needs (canonical
// JSON, time formats, the cluster folder name). Each has the signature and
// the bytes of its dbfiles counterpart, so that swapping them for the
// dbfiles calls changes no output.

package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// micro is t in UTC, truncated to whole microseconds: the one clock reading
// every time column of a row is derived from (notes §3). Stands in for
// dbfiles.Micro.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// tsOf is the REAL Unix seconds of t's microsecond: the nearest float64 to
// that exact decimal, which Python's datetime turns back into the same
// microsecond. Stands in for dbfiles.TS.
func tsOf(t time.Time) float64 { return float64(micro(t).UnixMicro()) / 1e6 }

// dtOf is t as "YYYY-MM-DD HH:MM:SS.mmm" UTC, milliseconds truncated.
// Stands in for dbfiles.DT.
func dtOf(t time.Time) string { return micro(t).Format("2006-01-02 15:04:05.000") }

// formatTime is the canonical datetime inside JSON:
// "YYYY-MM-DDTHH:MM:SS.ffffffZ". Stands in for dbfiles.FormatTime.
func formatTime(t time.Time) string { return micro(t).Format("2006-01-02T15:04:05.000000Z") }

// timeOfTS turns REAL Unix seconds back into a time the way Python's
// datetime.fromtimestamp does: the fraction times 10⁶, rounded half to even.
func timeOfTS(ts float64) time.Time {
	sec := math.Floor(ts)
	us := math.RoundToEven((ts - sec) * 1e6)
	return time.Unix(int64(sec), int64(us)*1000).UTC()
}

// sanitizeCluster is the history folder name of a cluster: every character
// outside [a-zA-Z0-9_-] becomes '_', and "" becomes "default".
func sanitizeCluster(name string) string {
	if name == "" {
		return "default"
	}
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// canonicalJSON encodes v as canonical JSON (notes §4): object keys sorted,
// no spaces, raw UTF-8 including U+2028/U+2029, no HTML escaping, no
// trailing newline, floats in Python's repr form (100.0, 1e-05, 1e+16),
// times as formatTime. Maps, slices, strings, numbers, bools, nil,
// json.Number, json.RawMessage and time.Time are written directly; any other
// value goes through encoding/json first. NaN and infinities are refused.
// Stands in for dbfiles.CanonicalJSON.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case json.Number:
		return writeNumber(b, x)
	case json.RawMessage:
		return writeRaw(b, x)
	case float64:
		return writeFloat(b, x)
	case float32:
		return writeFloat(b, float64(x))
	case int, int8, int16, int32, int64:
		b.WriteString(strconv.FormatInt(reflect.ValueOf(x).Int(), 10))
	case uint, uint8, uint16, uint32, uint64:
		b.WriteString(strconv.FormatUint(reflect.ValueOf(x).Uint(), 10))
	case time.Time:
		writeString(b, formatTime(x))
	case map[string]any:
		return writeObject(b, x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return writeObject(b, m)
	case []any:
		return writeArray(b, len(x), func(i int) any { return x[i] })
	case []string:
		return writeArray(b, len(x), func(i int) any { return x[i] })
	case []int32:
		return writeArray(b, len(x), func(i int) any { return x[i] })
	case []int:
		return writeArray(b, len(x), func(i int) any { return x[i] })
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		return writeRaw(b, raw)
	}
	return nil
}

// writeRaw re-encodes JSON text canonically, numbers kept as written.
func writeRaw(b *bytes.Buffer, raw []byte) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("canonical json: %w", err)
	}
	return writeJSON(b, v)
}

func writeObject(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if err := writeJSON(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func writeArray(b *bytes.Buffer, n int, at func(int) any) error {
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSON(b, at(i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// writeString writes s as Python's json.dumps(ensure_ascii=False) does:
// only '"', '\\' and control characters below 0x20 are escaped; invalid
// UTF-8 becomes U+FFFD.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// writeNumber writes an integer literal as given and any other number in
// Python's float form, so a value read from JSON keeps one byte form.
func writeNumber(b *bytes.Buffer, n json.Number) error {
	if !strings.ContainsAny(string(n), ".eE") {
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			b.WriteString(string(n))
			return nil
		}
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return fmt.Errorf("canonical json: number %s: %w", string(n), err)
	}
	return writeFloat(b, f)
}

// writeFloat writes f as Python's repr: shortest digits; fixed notation
// with at least one decimal for exponents -4..15, else d[.ddd]e±XX.
func writeFloat(b *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("canonical json: %v is not a JSON number", f)
	}
	if f == 0 {
		if math.Signbit(f) {
			b.WriteString("-0.0")
		} else {
			b.WriteString("0.0")
		}
		return nil
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		b.WriteString(e)
		return nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	b.WriteString(s)
	return nil
}
