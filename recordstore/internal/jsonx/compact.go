// Compacting checked JSON text: white space outside strings removed.

package jsonx

// AppendCompact appends src, JSON text Scan accepted, without white space
// outside its strings, as encoding/json's Compact does.
func AppendCompact(dst, src []byte) []byte {
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

// HasSpace reports whether b holds a byte JSON counts as white space
// (inside strings too: AppendCompact then keeps those).
func HasSpace(b []byte) bool {
	for _, c := range b {
		if isSpace[c] {
			return true
		}
	}
	return false
}
