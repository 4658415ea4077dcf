// Row buffers: normalized rows held compactly, as bytes, between reading
// them and committing them, instead of as one Values slice per row.

package recordstore

import (
	"encoding/binary"
	"io"
	"math"
)

// bigString is the length from which RowBuffer keeps a string value by
// reference instead of copying it into its bytes.
const bigString = 256

// Value tags of a RowBuffer's encoding.
const (
	tagNull   = iota // no payload
	tagInt           // zig-zag uvarint
	tagFloat         // 8 bytes, little-endian IEEE 754 bits
	tagString        // uvarint length, then the bytes
	tagBig           // uvarint index into RowBuffer.big
)

// RowBuffer holds rows of stored values (see Values) in a compact
// encoding: a tag byte per value followed by a varint, 8 bytes or the
// text, all rows in one growing byte slice. A small integer costs two or
// three bytes instead of the 40 or so of a Values slice, and strings of
// bigString bytes or more are kept by reference, never copied. Rows come
// back, in order, from Source.
//
// Add copies what it keeps; the zero value is an empty buffer ready to use.
// A RowBuffer is not safe for concurrent use, except that any number of
// Sources may read it while nothing is added.
type RowBuffer struct {
	data  []byte
	big   []string
	rows  int
	width int // values per row, from the first row
}

// Add appends one row of stored values: each value nil, string, int64 or
// float64. It refuses (ErrInvalid) a value of another type, and a row with
// another number of values than the first row had; the buffer is then
// unchanged.
func (b *RowBuffer) Add(vals Values) error {
	if b.rows > 0 && len(vals) != b.width {
		return Invalidf("row buffer: a row of %d values after rows of %d", len(vals), b.width)
	}
	start, bigs := len(b.data), len(b.big)
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			b.data = append(b.data, tagNull)
		case int64:
			b.data = binary.AppendVarint(append(b.data, tagInt), x)
		case float64:
			b.data = binary.LittleEndian.AppendUint64(append(b.data, tagFloat), math.Float64bits(x))
		case string:
			if len(x) >= bigString {
				b.data = binary.AppendUvarint(append(b.data, tagBig), uint64(len(b.big)))
				b.big = append(b.big, x)
				continue
			}
			b.data = binary.AppendUvarint(append(b.data, tagString), uint64(len(x)))
			b.data = append(b.data, x...)
		default:
			b.data, b.big = b.data[:start], b.big[:bigs]
			return Invalidf("row buffer: %T is not a stored value", v)
		}
	}
	b.width = len(vals)
	b.rows++
	return nil
}

// Len is the number of rows added.
func (b *RowBuffer) Len() int { return b.rows }

// Size is the number of bytes the buffer holds its rows in, not counting
// the strings it keeps by reference.
func (b *RowBuffer) Size() int { return len(b.data) }

// Source returns a RowSource yielding the rows added so far, in order,
// each as a fresh Values; it reads the buffer without changing it.
func (b *RowBuffer) Source() RowSource {
	return &rowBufferSource{b: b, n: b.rows}
}

// rowBufferSource reads the rows of a RowBuffer.
type rowBufferSource struct {
	b    *RowBuffer
	n    int // rows announced
	read int // rows returned
	off  int // offset of the next row in b.data
}

// Len is the number of rows the buffer held when the source was made.
func (s *rowBufferSource) Len() int { return s.n }

// Next decodes the next row; io.EOF after the last one.
func (s *rowBufferSource) Next() (Values, error) {
	if s.read == s.n {
		return nil, io.EOF
	}
	data := s.b.data
	vals := make(Values, s.b.width)
	for i := range vals {
		tag := data[s.off]
		s.off++
		switch tag {
		case tagInt:
			x, n := binary.Varint(data[s.off:])
			vals[i], s.off = x, s.off+n
		case tagFloat:
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[s.off:]))
			s.off += 8
		case tagString:
			l, n := binary.Uvarint(data[s.off:])
			s.off += n
			vals[i] = string(data[s.off : s.off+int(l)])
			s.off += int(l)
		case tagBig:
			at, n := binary.Uvarint(data[s.off:])
			vals[i], s.off = s.b.big[at], s.off+n
		}
	}
	s.read++
	return vals, nil
}

// Rows is a set of rows of stored values that an append may read more
// than once (to check them, then to write them): a *RowBuffer, or
// ValueRows.
type Rows interface {
	// Len is the number of rows.
	Len() int
	// Source returns a fresh RowSource over the rows, from the first.
	Source() RowSource
}

var (
	_ Rows = (*RowBuffer)(nil)
	_ Rows = ValueRows(nil)
)

// ValueRows are rows of stored values held as they are, one Values slice
// per row: for rows a caller has built as Values already (a recorder's
// buffered events), which a RowBuffer would only encode and decode again.
// The rows must not change while an append reads them.
type ValueRows []Values

// Len is the number of rows.
func (r ValueRows) Len() int { return len(r) }

// Source returns a RowSource yielding the rows in order (the Values
// themselves, not copies).
func (r ValueRows) Source() RowSource { return &valueRowsSource{rows: r} }

type valueRowsSource struct {
	rows ValueRows
	next int
}

func (s *valueRowsSource) Len() int { return len(s.rows) }

func (s *valueRowsSource) Next() (Values, error) {
	if s.next >= len(s.rows) {
		return nil, io.EOF
	}
	v := s.rows[s.next]
	s.next++
	return v, nil
}
