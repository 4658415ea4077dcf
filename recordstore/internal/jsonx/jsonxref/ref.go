// Package jsonxref is the reference the store's JSON grammar (package
// jsonx) is checked against in tests and fuzz targets: encoding/json's
// Valid, plus the three refusals jsonx adds, each written the slow,
// obviously correct way. It is imported by tests only.
package jsonxref

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// Valid reports whether b is one JSON value that encoding/json accepts,
// whose text is UTF-8, whose strings hold no lone surrogate escape and
// whose objects repeat no name.
func Valid(b []byte) bool {
	return json.Valid(b) && Rules(b)
}

// Rules reports whether b breaks none of the three rules jsonx adds to
// encoding/json's grammar: its text is UTF-8, no \u escape is a lone
// surrogate, no object repeats a name. It answers for any b; for text that
// is not JSON the answer means little.
func Rules(b []byte) bool {
	return utf8.Valid(b) && !loneSurrogate(b) && !repeatedName(b)
}

// loneSurrogate reports whether a \u escape of b (valid JSON) is a UTF-16
// surrogate that is not a high one followed by a low one.
func loneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 >= len(b) || b[i+1] != 'u' {
			i++ // a two-byte escape: its second byte is no backslash
			continue
		}
		if i+6 > len(b) {
			return false // not JSON
		}
		r := hexValue(b[i+2 : i+6])
		switch {
		case r >= 0xd800 && r <= 0xdbff:
			if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			lo := hexValue(b[i+8 : i+12])
			if lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		default:
			i += 5
		}
	}
	return false
}

func hexValue(h []byte) int {
	n := 0
	for _, c := range h {
		n *= 16
		switch {
		case c >= '0' && c <= '9':
			n += int(c - '0')
		case c >= 'a' && c <= 'f':
			n += int(c-'a') + 10
		default:
			n += int(c-'A') + 10
		}
	}
	return n
}

// repeatedName reports whether an object of b (valid JSON) has a name
// twice, names compared as encoding/json decodes them.
func repeatedName(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		object bool
		names  map[string]bool
		isName bool // the next token of this object is a name
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			return false // not valid JSON: json.Valid said so already
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].isName = true
			}
			continue
		}
		if top != nil && top.object && top.isName {
			name := tok.(string)
			if top.names[name] {
				return true
			}
			top.names[name] = true
			top.isName = false
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &level{object: d == '{', names: map[string]bool{}, isName: d == '{'})
			continue
		}
		if top != nil && top.object {
			top.isName = true
		}
	}
}
