// Names repeated in one object: Scan keeps the names of the open objects
// and compares each new name with its object's earlier ones, after
// unescaping.

package jsonx

import "bytes"

// nameSpan is the raw text of an object name between its quotes.
type nameSpan struct {
	from, to int32
	escaped  bool
}

// objectMark is what Scan keeps of an open object.
type objectMark struct {
	start   int32  // where its names start in spans
	seen    uint64 // a bit per (length, first byte) of its names, when none is escaped
	escaped bool   // a name holds an escape: compare every name
}

// nameBit is the bit of span's name in objectMark.seen: names with
// different bits differ.
func nameBit(b []byte, span nameSpan) uint64 {
	n := uint(span.to - span.from)
	if n == 0 {
		return 1
	}
	return 1 << ((n*7 + uint(b[span.from])) & 63)
}

// linearNames is how many names of one object are compared one by one
// before a set of them is made.
const linearNames = 16

// repeated reports whether the name of span is among the names of mine.
func repeated(b []byte, mine []nameSpan, span nameSpan, scratch *[2][]byte) bool {
	n := span.to - span.from
	for _, o := range mine {
		if !o.escaped && !span.escaped {
			if o.to-o.from == n && string(b[o.from:o.to]) == string(b[span.from:span.to]) {
				return true
			}
			continue
		}
		if bytes.Equal(unescaped(&scratch[0], b, o), unescaped(&scratch[1], b, span)) {
			return true
		}
	}
	return false
}

// addToSet adds the name of span to set and reports whether it was there.
func addToSet(set map[string]struct{}, b []byte, span nameSpan, scratch *[2][]byte) bool {
	name := unescaped(&scratch[0], b, span)
	if _, dup := set[string(name)]; dup {
		return true
	}
	set[string(name)] = struct{}{}
	return false
}

// unescaped returns the name of span, unescaped into buf when it holds
// escapes.
func unescaped(buf *[]byte, b []byte, span nameSpan) []byte {
	raw := b[span.from:span.to]
	if !span.escaped {
		return raw
	}
	*buf = AppendUnquoted((*buf)[:0], raw)
	return *buf
}
