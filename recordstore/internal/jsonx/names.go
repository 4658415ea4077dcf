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

// addName adds the name of span to the names of the innermost open
// object, at depth (from 0) among the open objects, and reports whether
// the object has that name already. The object's names are compared one by
// one while it has fewer than linearNames: they are its spans, from
// mark.start on, and mark's bits (seen) let a name of a new length and
// first byte skip the comparisons. From linearNames names on they are a
// set of the unescaped names, (*sets)[depth], made here. It returns spans
// with the name appended while the object's names are compared one by one.
//
// It takes and returns spans rather than keeping them in a struct, so that
// Scan's arrays of the first names stay on its stack: nothing is allocated
// until an object has linearNames names or the open objects more than
// Scan's arrays hold.
func addName(b []byte, span nameSpan, spans []nameSpan, mark *objectMark, depth int,
	sets *map[int]map[string]struct{}, scratch *[2][]byte) ([]nameSpan, bool) {
	if set := (*sets)[depth]; set != nil {
		return spans, addToSet(set, b, span, scratch)
	}
	mine := spans[mark.start:]
	if len(mine) >= linearNames {
		// The object outgrows the comparisons one by one: its names
		// move into a set.
		if *sets == nil {
			*sets = map[int]map[string]struct{}{}
		}
		set := make(map[string]struct{}, 4*linearNames)
		for _, o := range mine {
			addToSet(set, b, o, scratch)
		}
		(*sets)[depth] = set
		return spans, addToSet(set, b, span, scratch)
	}
	dup := false
	if span.escaped || mark.escaped {
		mark.escaped = true
		dup = repeated(b, mine, span, scratch)
	} else if bit := nameBit(b, span); mark.seen&bit != 0 {
		dup = repeated(b, mine, span, scratch)
	} else {
		mark.seen |= bit // no name before has this length and first byte
	}
	return append(spans, span), dup
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
