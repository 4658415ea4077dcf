// Package jsonx is the one JSON grammar of the store: it checks JSON text
// without decoding it, in one pass over the bytes, without recursion, and
// without allocation while no more than 64 brackets (16 of them objects)
// and 16 names of open objects are open at once. Errors say at which byte
// and why (SyntaxError).
//
// It is stricter than encoding/json's Valid (FuzzEnd compares it with the
// reference of package jsonxref, which is encoding/json's Valid plus these
// rules written the slow way): on top of RFC 8259's grammar it refuses, as
// RFC 8259 §8.1 and §4 allow,
// bytes that are not UTF-8 inside strings, \u escapes of a lone UTF-16
// surrogate ("\ud800"), and a name repeated in one object (compared after
// unescaping, so "a" and "\u0061" are the same name). Text it accepts
// therefore means one thing to every JSON reader.
package jsonx

import (
	"fmt"
	"unicode/utf8"
)

// MaxNesting is encoding/json's limit on nested objects and arrays.
const MaxNesting = 10000

// SyntaxError is JSON text refused at byte Offset (from 0) for Msg.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error gives the offset counted from 1, as editors do: "byte 7: ...".
func (e *SyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset+1, e.Msg) }

func errAt(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// failure is where and why a scan failed. The scanning functions record it
// and return -1, so that the hot path carries no error values; the error
// is made once, at the end (err).
type failure struct {
	off    int
	format string
	arg    any // the format's one argument, if it has one
}

// at records a failure at off and returns -1.
func (f *failure) at(off int, msg string) int {
	f.off, f.format, f.arg = off, msg, nil
	return -1
}

// atf is at with a format of one argument.
func (f *failure) atf(off int, format string, arg any) int {
	f.off, f.format, f.arg = off, format, arg
	return -1
}

func (f *failure) err() error {
	if f.arg == nil {
		return &SyntaxError{Offset: f.off, Msg: f.format}
	}
	return errAt(f.off, f.format, f.arg)
}

// Valid reports whether b is one JSON value, with optional white space
// around it.
func Valid(b []byte) bool { return Check(b) == nil }

// Check returns nil when b is one JSON value with optional white space
// around it, else a *SyntaxError saying where and why it is not.
func Check(b []byte) error {
	end, err := Scan(b, Space(b, 0))
	if err != nil {
		return err
	}
	if j := Space(b, end); j != len(b) {
		return errAt(j, "data after the value")
	}
	return nil
}

// Space returns the index of the first byte at or after i that is not
// JSON white space.
func Space(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// Scan checks the JSON value that starts at b[i] and returns the index
// just after it, or a *SyntaxError: not well-formed, nested deeper than
// MaxNesting, a string that is not UTF-8 or holds a lone surrogate escape,
// or a name repeated in one object.
func Scan(b []byte, i int) (int, error) {
	var shallow [64]byte
	open := shallow[:0] // the open brackets, innermost last
	// The names of the open objects, to find one repeated: spans
	// compared one by one while an object has few names, a set of the
	// unescaped names (sets, by depth) once it has more.
	var shallowSpans [linearNames]nameSpan
	spans := shallowSpans[:0] // the names of every open object, innermost last
	var shallowMarks [16]objectMark
	marks := shallowMarks[:0] // one per open object, innermost last
	var sets map[int]map[string]struct{}
	var scratch [2][]byte // unescaped names being compared
	var f failure
	n := len(b)
value:
	if i >= n {
		return i, errAt(i, "want a value")
	}
	switch c := b[i]; {
	case c == '"':
		if i, _ = str(b, i, &f); i < 0 {
			return f.off, f.err()
		}
	case c == '{' || c == '[':
		if len(open) >= MaxNesting {
			return i, errAt(i, "nesting deeper than %d", MaxNesting)
		}
		open = append(open, c)
		i = Space(b, i+1)
		if i < n && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
			open = open[:len(open)-1]
			i++
			break
		}
		if c == '{' {
			marks = append(marks, objectMark{start: int32(len(spans))})
		}
		if c == '[' {
			goto value
		}
		goto key
	case c == '-' || c >= '0' && c <= '9':
		if i, _ = number(b, i, &f); i < 0 {
			return f.off, f.err()
		}
	case c == 't':
		if i = word(b, i, "true", &f); i < 0 {
			return f.off, f.err()
		}
	case c == 'f':
		if i = word(b, i, "false", &f); i < 0 {
			return f.off, f.err()
		}
	case c == 'n':
		if i = word(b, i, "null", &f); i < 0 {
			return f.off, f.err()
		}
	default:
		return i, errAt(i, "want a value, got %q", c)
	}
	// after a value: done, or ',' and the next one, or a closing bracket
	for len(open) > 0 {
		i = Space(b, i)
		if i >= n {
			return i, errAt(i, "unterminated value")
		}
		top := open[len(open)-1]
		switch b[i] {
		case ',':
			i = Space(b, i+1)
			if top == '[' {
				goto value
			}
			goto key
		case top + 2:
			open = open[:len(open)-1]
			if top == '{' {
				depth := len(marks) - 1
				spans = spans[:marks[depth].start]
				marks = marks[:depth]
				if sets != nil {
					delete(sets, depth)
				}
			}
			i++
		default:
			return i, errAt(i, "want ',' or '%c'", top+2)
		}
	}
	return i, nil
key:
	if i >= n || b[i] != '"' {
		return i, errAt(i, "want a quoted name")
	}
	start := i
	end, escaped := str(b, i, &f)
	if end < 0 {
		return f.off, f.err()
	}
	depth := len(marks) - 1
	var dup bool
	spans, dup = addName(b, nameSpan{int32(start + 1), int32(end - 1), escaped}, spans, &marks[depth], depth, &sets, &scratch)
	if dup {
		return start, errAt(start, "name %s appears twice in one object", Quote(b[start+1:end-1]))
	}
	i = Space(b, end)
	if i >= n || b[i] != ':' {
		return i, errAt(i, "want ':' after a name")
	}
	i = Space(b, i+1)
	goto value
}

// String checks the string that starts at the quote b[i] and returns the
// index after its closing quote and whether it holds escapes. Control
// bytes, bytes that are not UTF-8, malformed escapes and \u escapes of a
// lone surrogate are refused with a *SyntaxError.
func String(b []byte, i int) (end int, escaped bool, err error) {
	var f failure
	if end, escaped = str(b, i, &f); end < 0 {
		return f.off, false, f.err()
	}
	return end, escaped, nil
}

// str is String, recording a failure in f and returning -1.
func str(b []byte, i int, f *failure) (int, bool) {
	escaped := false
	j := i + 1
	for {
		for j < len(b) && plainASCII[b[j]] {
			j++
		}
		if j >= len(b) {
			return f.at(j, "unterminated string"), false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped
		case c == '\\':
			escaped = true
			n := escapeLen(b, j, f)
			if n < 0 {
				return -1, false
			}
			j += n
		case c < 0x20:
			return f.at(j, "control character in a string"), false
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return f.at(j, "string is not valid UTF-8"), false
			}
			j += size
		}
	}
}

// escapeLen returns the length of the escape sequence at b[j] (2, 6, or 12
// for a surrogate pair), or -1.
func escapeLen(b []byte, j int, f *failure) int {
	if j+1 >= len(b) {
		return f.at(j, "unterminated escape")
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r := hex4(b, j+2)
		switch {
		case r < 0:
			return f.at(j, "invalid \\u escape")
		case r >= 0xd800 && r < 0xdc00: // high surrogate: a low one must follow
			if j+7 < len(b) && b[j+6] == '\\' && b[j+7] == 'u' {
				if lo := hex4(b, j+8); lo >= 0xdc00 && lo < 0xe000 {
					return 12
				}
			}
			return f.atf(j, "\\u%04x is a lone UTF-16 surrogate", r)
		case r >= 0xdc00 && r < 0xe000:
			return f.atf(j, "\\u%04x is a lone UTF-16 surrogate", r)
		}
		return 6
	}
	return f.atf(j, "invalid escape \\%c", rune(b[j+1]))
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

// AppendUnquoted appends to dst the value of raw, the text between the
// quotes of a string String accepted.
func AppendUnquoted(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := i
		for j < len(raw) && raw[j] != '\\' {
			j++
		}
		dst = append(dst, raw[i:j]...)
		if j >= len(raw) {
			break
		}
		var n int
		dst, n = unescape(dst, raw, j)
		i = j + n
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
		if r >= 0xd800 && r < 0xdc00 { // a pair, as String checked
			lo := hex4(raw, i+8)
			return utf8.AppendRune(dst, 0x10000+(r-0xd800)<<10+(lo-0xdc00)), 12
		}
		return utf8.AppendRune(dst, r), 6
	}
	return append(dst, raw[i+1]), 2 // '"', '\\', '/'
}

// Number checks the number that starts at b[i] and returns the index after
// it and whether it is written as an integer (no fraction, no exponent), or
// a *SyntaxError.
func Number(b []byte, i int) (end int, isInt bool, err error) {
	var f failure
	if end, isInt = number(b, i, &f); end < 0 {
		return f.off, false, f.err()
	}
	return end, isInt, nil
}

// number is Number, recording a failure in f and returning -1.
func number(b []byte, i int, f *failure) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return f.at(i, "invalid number"), false
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		j := digits(b, i+1)
		if j == i+1 {
			return f.at(j, "invalid number: no digits after '.'"), false
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
			return f.at(j, "invalid number: no exponent digits"), false
		}
		i = j
	}
	return i, isInt
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Literal checks that w (true, false or null) is at b[i] and returns the
// index after it, or a *SyntaxError.
func Literal(b []byte, i int, w string) (int, error) {
	var f failure
	if end := word(b, i, w, &f); end >= 0 {
		return end, nil
	}
	return i, f.err()
}

// word is Literal, recording a failure in f and returning -1.
func word(b []byte, i int, w string, f *failure) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return f.atf(i, "invalid literal (want %s)", w)
	}
	return i + len(w)
}

var (
	// plainASCII marks the bytes a string holds as they are and that
	// are whole UTF-8 characters: printable ASCII but '"' and '\\'.
	plainASCII = func() (t [256]bool) {
		for c := 0x20; c < 0x80; c++ {
			t[c] = c != '"' && c != '\\'
		}
		return t
	}()
	isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}
)
