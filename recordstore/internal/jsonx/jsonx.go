// Package jsonx checks JSON text without decoding it: one pass over the
// bytes, no recursion and no allocation for nesting up to 64 levels. It
// accepts exactly what encoding/json's Valid accepts (FuzzEnd compares the
// two), bytes that are not UTF-8 inside strings included.
package jsonx

// MaxNesting is encoding/json's limit on nested objects and arrays.
const MaxNesting = 10000

// Valid reports whether b is one JSON value, with optional white space
// around it.
func Valid(b []byte) bool {
	end := End(b, Space(b, 0))
	return end >= 0 && Space(b, end) == len(b)
}

// Space returns the index of the first byte at or after i that is not
// JSON white space.
func Space(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// End returns the index just after the JSON value that starts at b[i], or
// -1 when no well-formed value starts there (or it nests deeper than
// MaxNesting).
func End(b []byte, i int) int {
	var shallow [64]byte
	open := shallow[:0] // the open brackets, innermost last
	n := len(b)
value:
	if i >= n {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		if i = str(b, i); i < 0 {
			return -1
		}
	case c == '{' || c == '[':
		if len(open) >= MaxNesting {
			return -1
		}
		open = append(open, c)
		i = Space(b, i+1)
		if i < n && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
			open = open[:len(open)-1]
			i++
			break
		}
		if c == '[' {
			goto value
		}
		goto key
	case c == '-' || c >= '0' && c <= '9':
		if i = number(b, i); i < 0 {
			return -1
		}
	case c == 't':
		if i = word(b, i, "true"); i < 0 {
			return -1
		}
	case c == 'f':
		if i = word(b, i, "false"); i < 0 {
			return -1
		}
	case c == 'n':
		if i = word(b, i, "null"); i < 0 {
			return -1
		}
	default:
		return -1
	}
	// after a value: done, or ',' and the next one, or a closing bracket
	for len(open) > 0 {
		i = Space(b, i)
		if i >= n {
			return -1
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
			i++
		default:
			return -1
		}
	}
	return i
key:
	if i >= n || b[i] != '"' {
		return -1
	}
	if i = str(b, i); i < 0 {
		return -1
	}
	i = Space(b, i)
	if i >= n || b[i] != ':' {
		return -1
	}
	i = Space(b, i+1)
	goto value
}

// str returns the index after the string starting at b[i] (a quote), or
// -1.
func str(b []byte, i int) int {
	i++
	for {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		default: // a backslash
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !hex[b[i+2]] || !hex[b[i+3]] || !hex[b[i+4]] || !hex[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		}
	}
}

// number returns the index after the number starting at b[i], or -1.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func word(b []byte, i int, w string) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

var (
	// plain marks the bytes a string holds as they are: all but the
	// quote, the backslash and control characters.
	plain = func() (t [256]bool) {
		for c := 0x20; c < 256; c++ {
			t[c] = c != '"' && c != '\\'
		}
		return t
	}()
	hex = func() (t [256]bool) {
		for _, c := range "0123456789abcdefABCDEF" {
			t[c] = true
		}
		return t
	}()
	isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}
)
