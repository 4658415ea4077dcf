// A schema-aware scanner for one JSON object per line: it fills
// recordstore.Values directly, with the same results as encoding/json
// followed by recordstore.Kind.Normalize (see the differential fuzz test).

package spool

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

// maxJSONDepth is encoding/json's nesting limit; json columns deeper than
// this are refused, as json.Compact refuses them.
const maxJSONDepth = 10000

// rowScanner parses lines of one kind. It is not safe for concurrent use.
type rowScanner struct {
	kind *recordstore.Kind
	cols map[string]int
	// quoted holds each column's name as a JSON string, `"name"`, when it
	// needs no escaping (else nil): a key is matched against the expected
	// column's by its bytes before it is scanned at all.
	quoted [][]byte
	seen   []bool
	buf    []byte // scratch for unescaped keys and compacted json
	// text is the line being scanned as a string, made on its first plain
	// string value: the row's strings are slices of it, one allocation
	// per row rather than one per value.
	text string
}

func newRowScanner(kind *recordstore.Kind) *rowScanner {
	cols := make(map[string]int, len(kind.Columns))
	quoted := make([][]byte, len(kind.Columns))
	for i, c := range kind.Columns {
		cols[c.Name] = i
		if plainString(c.Name) {
			quoted[i] = []byte(`"` + c.Name + `"`)
		}
	}
	return &rowScanner{kind: kind, cols: cols, quoted: quoted, seen: make([]bool, len(kind.Columns))}
}

// expected returns the quoted name of column next, or nil when there is
// no such column or its name needs escaping.
func (s *rowScanner) expected(next int) []byte {
	if next < len(s.quoted) {
		return s.quoted[next]
	}
	return nil
}

// plainString reports whether s is written in JSON as it is, between
// quotes: printable ASCII without '"' or '\\'.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainASCII[s[i]] {
			return false
		}
	}
	return true
}

// scanError is a syntax error at a byte offset of the line.
func scanError(off int, format string, args ...any) error {
	return recordstore.Invalidf("byte %d: %s", off+1, fmt.Sprintf(format, args...))
}

// scan parses line as one JSON object and returns its normalized values.
func (s *rowScanner) scan(line []byte) (recordstore.Values, error) {
	vals := make(recordstore.Values, len(s.kind.Columns))
	clear(s.seen)
	s.text = ""
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, scanError(i, "want a JSON object")
	}
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		return s.finish(vals, line, i+1)
	}
	next := 0 // the column expected next: rows are usually written in column order
	for {
		idx, j, err := s.key(line, i, next)
		if err != nil {
			return nil, err
		}
		j = skipWS(line, j)
		if j >= len(line) || line[j] != ':' {
			return nil, scanError(j, "want ':' after a key")
		}
		j = skipWS(line, j+1)
		v, j, err := s.value(s.kind.Columns[idx], line, j)
		if err != nil {
			return nil, err
		}
		vals[idx] = v
		next = idx + 1
		j = skipWS(line, j)
		if j >= len(line) {
			return nil, scanError(j, "unterminated object")
		}
		switch line[j] {
		case ',':
			i = skipWS(line, j+1)
		case '}':
			return s.finish(vals, line, j+1)
		default:
			return nil, scanError(j, "want ',' or '}' after a value")
		}
	}
}

func (s *rowScanner) finish(vals recordstore.Values, line []byte, i int) (recordstore.Values, error) {
	if j := skipWS(line, i); j != len(line) {
		return nil, scanError(j, "data after the object")
	}
	if err := s.kind.CheckRequired(vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// key parses the object key at line[i] and returns its column index.
func (s *rowScanner) key(line []byte, i, next int) (int, int, error) {
	if i >= len(line) || line[i] != '"' {
		return 0, i, scanError(i, "want a quoted key")
	}
	idx, end := -1, 0
	if q := s.expected(next); q != nil && bytes.HasPrefix(line[i:], q) {
		// The column expected next, written as it is usually written:
		// the key ends at the closing quote the prefix holds.
		idx, end = next, i+len(q)
	} else {
		raw, e, plain, err := scanString(line, i)
		if err != nil {
			return 0, i, err
		}
		name := raw
		if !plain {
			s.buf = unquoteInto(s.buf[:0], raw)
			name = s.buf
		}
		if c, ok := s.cols[string(name)]; ok {
			idx = c
		}
		end = e
		if idx < 0 {
			return 0, i, recordstore.Invalidf("kind %s: unknown column %q", s.kind.Name, name)
		}
	}
	if s.seen[idx] {
		return 0, i, recordstore.Invalidf("kind %s: column %q appears twice in one object", s.kind.Name, s.kind.Columns[idx].Name)
	}
	s.seen[idx] = true
	return idx, end, nil
}

// value parses the value at line[i] for column c.
func (s *rowScanner) value(c recordstore.Column, line []byte, i int) (any, int, error) {
	if i >= len(line) {
		return nil, i, scanError(i, "want a value")
	}
	if c.Type == recordstore.TypeJSON {
		return s.jsonValue(c, line, i)
	}
	switch ch := line[i]; {
	case ch == 'n':
		end, err := literal(line, i, "null")
		return nil, end, err
	case ch == '"':
		raw, end, plain, err := scanString(line, i)
		if err != nil {
			return nil, i, err
		}
		var str string
		if plain {
			if s.text == "" {
				s.text = string(line)
			}
			str = s.text[i+1 : end-1]
		} else {
			str = string(unquoteInto(nil, raw))
		}
		v, err := s.typed(c, str)
		return v, end, err
	case ch == '-' || '0' <= ch && ch <= '9':
		end, isInt, err := scanNumber(line, i)
		if err != nil {
			return nil, i, err
		}
		v, err := s.number(c, line[i:end], isInt)
		return v, end, err
	case ch == 't' || ch == 'f':
		word := "true"
		if ch == 'f' {
			word = "false"
		}
		end, err := literal(line, i, word)
		if err != nil {
			return nil, i, err
		}
		v, err := s.boolean(c, ch == 't')
		return v, end, err
	case ch == '{' || ch == '[':
		if _, err := skipComposite(line, i); err != nil {
			return nil, i, err
		}
		return nil, i, s.columnErr(c, "want %s, got %s", c.Type, map[byte]string{'{': "an object", '[': "an array"}[ch])
	}
	return nil, i, scanError(i, "want a value, got %q", line[i])
}

func (s *rowScanner) columnErr(c recordstore.Column, format string, args ...any) error {
	return recordstore.Invalidf("kind %s: column %s (%s): %s", s.kind.Name, c.Name, c.Type, fmt.Sprintf(format, args...))
}

// typed normalizes a JSON string for column c (string and datetime
// accept strings; the other types refuse them).
func (s *rowScanner) typed(c recordstore.Column, str string) (any, error) {
	switch c.Type {
	case recordstore.TypeString:
		return str, nil
	case recordstore.TypeDatetime:
		if storedDatetime(str) {
			return str, nil // already what Format would make of it
		}
		t, err := recordstore.ParseDatetime(str)
		if err != nil {
			return nil, s.columnErr(c, "datetime %q is not RFC 3339 in years 0000-9999", str)
		}
		return t.Format(recordstore.DatetimeLayout), nil
	}
	return nil, s.columnErr(c, "want %s, got a string", c.Type)
}

// number normalizes a JSON number literal for column c.
func (s *rowScanner) number(c recordstore.Column, lit []byte, isInt bool) (any, error) {
	switch c.Type {
	case recordstore.TypeInteger:
		if isInt {
			if n, ok := parseSmallInt(lit); ok {
				return n, nil
			}
		}
		v, err := recordstore.ParseIntegerText(string(lit))
		if err != nil {
			return nil, s.columnErr(c, "%s is not an exact int64", lit)
		}
		return v, nil
	case recordstore.TypeNumber:
		if f, ok := parseShortFloat(lit); ok {
			return f, nil
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			return nil, s.columnErr(c, "%s is not a finite float64", lit)
		}
		return f, nil
	}
	return nil, s.columnErr(c, "want %s, got the number %s", c.Type, lit)
}

func (s *rowScanner) boolean(c recordstore.Column, b bool) (any, error) {
	if c.Type != recordstore.TypeBool {
		return nil, s.columnErr(c, "want %s, got a bool", c.Type)
	}
	if b {
		return int64(1), nil
	}
	return int64(0), nil
}

// jsonValue captures any JSON value as compact text. A JSON null is the
// text "null"; only an absent key is a null column.
func (s *rowScanner) jsonValue(c recordstore.Column, line []byte, i int) (any, int, error) {
	end := jsonx.End(line, i)
	if end < 0 {
		// Not one value: the slower scanner says where and why.
		_, err := skipValue(line, i)
		if err == nil {
			err = scanError(i, "not a JSON value")
		}
		return nil, i, err
	}
	if !hasSpaceOrControl(line[i:end]) {
		// Compact already: a slice of the row's one string.
		if s.text == "" {
			s.text = string(line)
		}
		return s.text[i:end], end, nil
	}
	s.buf = appendCompact(s.buf[:0], line[i:end])
	return string(s.buf), end, nil
}

// parseSmallInt parses an integer literal of at most 18 digits without
// allocating.
func parseSmallInt(lit []byte) (int64, bool) {
	neg := false
	d := lit
	if len(d) > 0 && d[0] == '-' {
		neg, d = true, d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, ch := range d {
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// exactPow10 are the powers of ten parseShortFloat divides by, all exact
// in a float64.
var exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseShortFloat parses a JSON number literal without an exponent and of
// at most 15 digits as strconv.ParseFloat would, without allocating: its
// digits make an integer m below 2^53 and its k fractional digits a power
// of ten, both exact in a float64, so m / 10^k, one correctly rounded
// division, is the double nearest the literal's value — ParseFloat's
// result (Clinger's fast path). It reports false for any other literal.
func parseShortFloat(lit []byte) (float64, bool) {
	d := lit
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	var m uint64
	digits, frac := 0, -1 // frac counts the digits after '.', -1 before one
	for _, c := range d {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false // an exponent
		}
	}
	if digits == 0 || digits > 15 || frac == 0 {
		return 0, false
	}
	f := float64(m)
	if frac > 0 {
		f /= exactPow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, scanError(i, "invalid literal (want %s)", word)
	}
	return i + len(word), nil
}

// scanNumber checks the JSON number grammar at b[i] and returns its end and
// whether it is a plain integer (no fraction, no exponent).
func scanNumber(b []byte, i int) (int, bool, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return start, false, scanError(i, "invalid number")
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		j := digits(b, i+1)
		if j == i+1 {
			return start, false, scanError(j, "invalid number: no digits after '.'")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return start, false, scanError(j, "invalid number: no exponent digits")
		}
		i = j
	}
	return i, isInt, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// scanString checks the string starting at the quote b[i]. It returns the
// raw bytes between the quotes, the index after the closing quote, and
// whether the raw bytes are already the unescaped value (no escapes, valid
// UTF-8).
func scanString(b []byte, i int) (raw []byte, end int, plain bool, err error) {
	plain = true
	j := i + 1
	for j < len(b) {
		if plainASCII[b[j]] { // most bytes: nothing to check
			j++
			continue
		}
		ch := b[j]
		switch {
		case ch == '"':
			return b[i+1 : j], j + 1, plain, nil
		case ch == '\\':
			plain = false
			n, err := escapeLen(b, j)
			if err != nil {
				return nil, j, false, err
			}
			j += n
		case ch < 0x20:
			return nil, j, false, scanError(j, "control character in a string")
		case ch < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			j += size
		}
	}
	return nil, j, false, scanError(j, "unterminated string")
}

// escapeLen returns the length of the valid escape sequence at b[j].
func escapeLen(b []byte, j int) (int, error) {
	if j+1 >= len(b) {
		return 0, scanError(j, "unterminated escape")
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if hex4(b, j+2) < 0 {
			return 0, scanError(j, "invalid \\u escape")
		}
		return 6, nil
	}
	return 0, scanError(j, "invalid escape \\%c", b[j+1])
}

func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquoteInto appends the unescaped form of raw (checked by scanString) to
// dst, with encoding/json's rules: invalid UTF-8 bytes and unpaired
// surrogates become U+FFFD.
func unquoteInto(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		ch := raw[i]
		switch {
		case ch == '\\':
			var n int
			dst, n = unescape(dst, raw, i)
			i += n
		case ch < utf8.RuneSelf:
			dst = append(dst, ch)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			} else {
				dst = append(dst, raw[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// unescape appends the escape at raw[i] and returns how many bytes it used.
func unescape(dst, raw []byte, i int) ([]byte, int) {
	switch raw[i+1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r := hex4(raw, i+2)
		if utf16.IsSurrogate(r) {
			if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if r2 := hex4(raw, i+8); r2 >= 0 {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						return utf8.AppendRune(dst, dec), 12
					}
				}
			}
			r = unicode.ReplacementChar
		}
		return utf8.AppendRune(dst, r), 6
	}
	return append(dst, raw[i+1]), 2 // '"', '\\', '/'
}

// skipValue checks the JSON value at b[i] and returns the index after it.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, scanError(i, "want a value")
	}
	switch ch := b[i]; {
	case ch == '"':
		_, end, _, err := scanString(b, i)
		return end, err
	case ch == '{' || ch == '[':
		return skipComposite(b, i)
	case ch == '-' || '0' <= ch && ch <= '9':
		end, _, err := scanNumber(b, i)
		return end, err
	case ch == 't':
		return literal(b, i, "true")
	case ch == 'f':
		return literal(b, i, "false")
	case ch == 'n':
		return literal(b, i, "null")
	}
	return i, scanError(i, "want a value, got %q", b[i])
}

// hasSpaceOrControl reports whether b holds a byte at or below ' ': JSON
// whitespace, or a space or control byte of a string.
func hasSpaceOrControl(b []byte) bool {
	for _, c := range b {
		if c <= ' ' {
			return true
		}
	}
	return false
}

// skipComposite checks the object or array at b[i] without recursion and
// returns the index after it. Nesting deeper than maxJSONDepth is refused.
func skipComposite(b []byte, i int) (int, error) {
	var shallow [32]byte
	stack := shallow[:0] // the open brackets
	for {
		// b[i] is a value start or a closing bracket is expected
		switch b[i] {
		case '{', '[':
			if len(stack) >= maxJSONDepth {
				return i, scanError(i, "nesting deeper than %d", maxJSONDepth)
			}
			open := b[i]
			stack = append(stack, open)
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closer(open) {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if open == '{' {
				var err error
				if i, err = objectKey(b, i); err != nil {
					return i, err
				}
			}
			if i >= len(b) {
				return i, scanError(i, "unterminated value")
			}
			continue // b[i] starts a member value
		default:
			end, err := skipValue(b, i)
			if err != nil {
				return end, err
			}
			i = end
		}
		// after a complete value: ',' or the closing bracket, repeatedly
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, scanError(i, "unterminated value")
			}
			top := stack[len(stack)-1]
			if b[i] == closer(top) {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return i, scanError(i, "want ',' or '%c'", closer(top))
			}
			i = skipWS(b, i+1)
			if top == '{' {
				var err error
				if i, err = objectKey(b, i); err != nil {
					return i, err
				}
			}
			if i >= len(b) {
				return i, scanError(i, "unterminated value")
			}
			break
		}
	}
}

// objectKey checks `"key" :` at b[i] and returns the index of the value.
func objectKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return i, scanError(i, "want a quoted key")
	}
	_, end, _, err := scanString(b, i)
	if err != nil {
		return end, err
	}
	end = skipWS(b, end)
	if end >= len(b) || b[end] != ':' {
		return end, scanError(end, "want ':' after a key")
	}
	return skipWS(b, end+1), nil
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// appendCompact appends src (one valid JSON value) without insignificant
// whitespace, as json.Compact does.
func appendCompact(dst, src []byte) []byte {
	if !hasSpaceOrControl(src) {
		return append(dst, src...) // compact already, as stored values mostly are
	}
	inString := false
	start := 0
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if inString {
			switch ch {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}
