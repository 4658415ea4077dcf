// A schema-aware scanner for one JSON object per line: it fills
// recordstore.Values directly, with the same results as encoding/json
// followed by recordstore.Kind.Normalize (see the differential fuzz test).

package spool

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

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
		e, escaped, err := jsonx.String(line, i)
		if err != nil {
			return 0, i, syntaxErr(err)
		}
		name := line[i+1 : e-1]
		if escaped {
			s.buf = jsonx.AppendUnquoted(s.buf[:0], name)
			name = s.buf
		}
		if c, ok := s.cols[string(name)]; ok {
			idx = c
		}
		end = e
		if idx < 0 {
			return 0, i, recordstore.Invalidf("kind %s: unknown column %s", s.kind.Name, recordstore.Quote(string(name)))
		}
	}
	if s.seen[idx] {
		return 0, i, recordstore.Invalidf("kind %s: column %s appears twice in one object", s.kind.Name, recordstore.Quote(s.kind.Columns[idx].Name))
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
		end, err := jsonx.Literal(line, i, "null")
		if err != nil {
			return nil, i, syntaxErr(err)
		}
		return nil, end, nil
	case ch == '"':
		end, escaped, err := jsonx.String(line, i)
		if err != nil {
			return nil, i, syntaxErr(err)
		}
		var str string
		if !escaped {
			if s.text == "" {
				s.text = string(line)
			}
			str = s.text[i+1 : end-1]
		} else {
			str = string(jsonx.AppendUnquoted(nil, line[i+1:end-1]))
		}
		v, err := s.typed(c, str)
		return v, end, err
	case ch == '-' || '0' <= ch && ch <= '9':
		end, isInt, err := jsonx.Number(line, i)
		if err != nil {
			return nil, i, syntaxErr(err)
		}
		v, err := s.number(c, line[i:end], isInt)
		return v, end, err
	case ch == 't' || ch == 'f':
		word := "true"
		if ch == 'f' {
			word = "false"
		}
		end, err := jsonx.Literal(line, i, word)
		if err != nil {
			return nil, i, syntaxErr(err)
		}
		v, err := s.boolean(c, ch == 't')
		return v, end, err
	case ch == '{' || ch == '[':
		if _, err := jsonx.Scan(line, i); err != nil {
			return nil, i, syntaxErr(err)
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
		if recordstore.IsStoredDatetime(str) {
			return str, nil // already what Format would make of it
		}
		t, err := recordstore.ParseDatetime(str)
		if err != nil {
			return nil, s.columnErr(c, "%s", recordstore.InvalidText(err))
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
			return nil, s.columnErr(c, "%s", recordstore.InvalidText(err))
		}
		return v, nil
	case recordstore.TypeNumber:
		if f, ok := parseShortFloat(lit); ok {
			return f, nil
		}
		f, err := recordstore.ParseNumberText(string(lit))
		if err != nil {
			return nil, s.columnErr(c, "%s", recordstore.InvalidText(err))
		}
		return f, nil
	}
	return nil, s.columnErr(c, "want %s, got the number %s", c.Type, recordstore.Quote(string(lit)))
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

// jsonValue captures any JSON value as compact text; a JSON null is a
// null column (recordstore.JSONNull), as NormalizeValue makes it.
func (s *rowScanner) jsonValue(c recordstore.Column, line []byte, i int) (any, int, error) {
	end, err := jsonx.Scan(line, i)
	if err != nil {
		return nil, i, syntaxErr(err)
	}
	if line[i] == 'n' { // Scan took one value: a value starting with n is null
		return nil, end, nil
	}
	if !jsonx.HasSpace(line[i:end]) {
		// Compact already: a slice of the row's one string.
		if s.text == "" {
			s.text = string(line)
		}
		return s.text[i:end], end, nil
	}
	s.buf = jsonx.AppendCompact(s.buf[:0], line[i:end])
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

func skipWS(b []byte, i int) int { return jsonx.Space(b, i) }

// syntaxErr turns an error of the JSON grammar (jsonx) into the scanner's
// ErrInvalid error at the same byte.
func syntaxErr(err error) error {
	var se *jsonx.SyntaxError
	if errors.As(err, &se) {
		return scanError(se.Offset, "%s", se.Msg)
	}
	return recordstore.Invalidf("%v", err)
}
