// Row spills: rows of stored values held in a scratch file, in
// RowBuffer's encoding, so that an append of any size is checked to its
// last row before anything is written without holding its rows in memory.

package recordstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// spillBuffer is the size of a RowSpill's write buffer and of each of its
// sources' read buffers.
const spillBuffer = 64 << 10

// errSpillCorrupt is what a spill source returns for bytes that are not
// rows of its encoding: a file changed under it, never bad input.
var errSpillCorrupt = errors.New("row spill: corrupt data")

// RowSpill holds rows of stored values (see Values) like RowBuffer, in
// the same compact encoding (each row after its length, a uvarint, and
// every string inline), but in a scratch file instead of memory: the
// memory it takes does not grow with the rows. The file is created in the
// folder given to NewRowSpill, readable by its owner only (0600), and is
// unlinked at once where the system allows it (on Unix; elsewhere by
// Close), so that a process that dies leaves nothing behind. It is not
// synced: it lives no longer than the process.
//
// Rows come back, in order, from Source, any number of times. A RowSpill
// is not safe for concurrent use, except that any number of Sources may
// read it while nothing is added.
type RowSpill struct {
	f       *os.File
	name    string // the file's name while it is still linked, else ""
	w       *bufio.Writer
	enc     []byte // one row's encoding, after room for its length
	rows    int
	width   int
	size    int64 // bytes of rows handed to w
	err     error // the first write error: the spill is unusable after it
	flushed int64 // bytes of rows known to be in the file
	closed  bool
}

// NewRowSpill creates an empty spill whose file is in dir (os.TempDir()
// when dir is ""). On error no file is left.
func NewRowSpill(dir string) (*RowSpill, error) {
	f, err := os.CreateTemp(dir, ".rows-*.spill")
	if err != nil {
		return nil, fmt.Errorf("row spill: %w", err)
	}
	s := &RowSpill{f: f, w: bufio.NewWriterSize(f, spillBuffer)}
	if err := os.Remove(f.Name()); err != nil {
		s.name = f.Name() // removed by Close
	}
	return s, nil
}

// Add appends one row of stored values: each value nil, string, int64 or
// float64. It refuses (ErrInvalid) a value of another type, and a row with
// another number of values than the first row had; the spill is then
// unchanged. An error writing the file is returned here and by every later
// Add and Source (from Next): the spill cannot be used after it.
func (s *RowSpill) Add(vals Values) error {
	if s.err != nil {
		return s.err
	}
	if s.rows > 0 && len(vals) != s.width {
		return Invalidf("row spill: a row of %d values after rows of %d", len(vals), s.width)
	}
	s.enc = append(s.enc[:0], make([]byte, binary.MaxVarintLen64)...)
	for _, v := range vals {
		var ok bool
		if s.enc, ok = appendStoredValue(s.enc, v); !ok {
			return Invalidf("row spill: %T is not a stored value", v)
		}
	}
	var l [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(l[:], uint64(len(s.enc)-binary.MaxVarintLen64))
	row := s.enc[binary.MaxVarintLen64-n:]
	copy(row, l[:n])
	if _, err := s.w.Write(row); err != nil {
		s.err = fmt.Errorf("row spill: %w", err)
		return s.err
	}
	s.size += int64(len(row))
	s.width = len(vals)
	s.rows++
	return nil
}

// Len is the number of rows added.
func (s *RowSpill) Len() int { return s.rows }

// Size is the number of bytes of the file the rows take.
func (s *RowSpill) Size() int64 { return s.size }

// Source returns a RowSource yielding the rows added so far, in order,
// each as a fresh Values, read from the file through a buffer of its own.
// A failure to write the rows out is returned by its Next.
func (s *RowSpill) Source() RowSource {
	src := &rowSpillSource{n: s.rows, width: s.width, size: s.size, err: s.flush()}
	if src.err == nil {
		src.r = bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.size), spillBuffer)
	}
	return src
}

// flush writes out the buffered rows.
func (s *RowSpill) flush() error {
	if s.err == nil && s.flushed < s.size {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("row spill: %w", err)
		}
		s.flushed = s.size
	}
	return s.err
}

// Close closes and removes the file; the spill and its sources cannot be
// used after it. Closing again does nothing.
func (s *RowSpill) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if s.name != "" {
		if rerr := os.Remove(s.name); rerr != nil && err == nil {
			err = rerr
		}
		s.name = ""
	}
	if err != nil {
		return fmt.Errorf("row spill: %w", err)
	}
	return nil
}

var _ Rows = (*RowSpill)(nil)

// rowSpillSource reads the rows of a RowSpill.
type rowSpillSource struct {
	r     *bufio.Reader
	n     int   // rows announced
	read  int   // rows returned
	width int   // values per row
	size  int64 // bytes of the rows: no string is longer
	err   error // sticky
	buf   []byte
}

// Len is the number of rows the spill held when the source was made.
func (s *rowSpillSource) Len() int { return s.n }

// Next decodes the next row; io.EOF after the last one.
func (s *rowSpillSource) Next() (Values, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.read == s.n {
		return nil, io.EOF
	}
	vals, err := s.row()
	if err != nil {
		s.err = err
		return nil, err
	}
	s.read++
	return vals, nil
}

// row reads the next row: its length, then its values, from the read
// buffer when the row fits in it.
func (s *rowSpillSource) row() (Values, error) {
	l, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, spillCorrupt(err)
	}
	if l > uint64(s.size) {
		return nil, spillCorrupt(nil)
	}
	if int(l) > s.r.Size() {
		cr := &countedReader{r: s.r}
		vals, err := decodeStoredRow(cr, s.width, int64(l), &s.buf)
		if err == nil && cr.n != int64(l) {
			err = spillCorrupt(nil)
		}
		return vals, err
	}
	row, err := s.r.Peek(int(l))
	if err != nil {
		return nil, spillCorrupt(err)
	}
	vals, err := decodeStoredValues(row, s.width)
	if err != nil {
		return nil, err
	}
	_, err = s.r.Discard(int(l))
	return vals, err
}

// decodeStoredValues decodes row, exactly the encodings of width values
// written by appendStoredValue; anything else is errSpillCorrupt.
func decodeStoredValues(row []byte, width int) (Values, error) {
	vals := make(Values, width)
	off := 0
	for i := range vals {
		if off >= len(row) {
			return nil, spillCorrupt(nil)
		}
		tag := row[off]
		off++
		switch tag {
		case tagNull:
		case tagInt:
			x, n := binary.Varint(row[off:])
			if n <= 0 {
				return nil, spillCorrupt(nil)
			}
			vals[i], off = x, off+n
		case tagFloat:
			if len(row)-off < 8 {
				return nil, spillCorrupt(nil)
			}
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(row[off:]))
			off += 8
		case tagString:
			l, n := binary.Uvarint(row[off:])
			if n <= 0 || l > uint64(len(row)-off-n) {
				return nil, spillCorrupt(nil)
			}
			off += n
			vals[i] = string(row[off : off+int(l)])
			off += int(l)
		default:
			return nil, spillCorrupt(nil)
		}
	}
	if off != len(row) {
		return nil, spillCorrupt(nil)
	}
	return vals, nil
}

// countedReader counts the bytes read through it.
type countedReader struct {
	r *bufio.Reader
	n int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countedReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// spillReader is what decodeStoredRow reads from.
type spillReader interface {
	io.Reader
	io.ByteReader
}

// appendStoredValue appends v's encoding (a tag, then its payload, see
// RowBuffer) to dst, every string inline; false when v is not a stored
// value.
func appendStoredValue(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, tagNull), true
	case int64:
		return binary.AppendVarint(append(dst, tagInt), x), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(dst, tagFloat), math.Float64bits(x)), true
	case string:
		dst = binary.AppendUvarint(append(dst, tagString), uint64(len(x)))
		return append(dst, x...), true
	}
	return dst, false
}

// smallSpillString is the length below which a string is read in one
// buffer and copied; a longer one is read straight into its own memory.
const smallSpillString = 4 << 10

// decodeStoredRow reads one row of width values written by
// appendStoredValue from r, for a row longer than the read buffer; no
// string is longer than max bytes; buf is scratch space kept between
// calls. Bytes that are not such a row, or end before it does, are
// errSpillCorrupt.
func decodeStoredRow(r spillReader, width int, max int64, buf *[]byte) (Values, error) {
	vals := make(Values, width)
	var f [8]byte
	for i := range vals {
		tag, err := r.ReadByte()
		if err != nil {
			return nil, spillCorrupt(err)
		}
		switch tag {
		case tagNull:
		case tagInt:
			x, err := binary.ReadVarint(r)
			if err != nil {
				return nil, spillCorrupt(err)
			}
			vals[i] = x
		case tagFloat:
			if _, err := io.ReadFull(r, f[:]); err != nil {
				return nil, spillCorrupt(err)
			}
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(f[:]))
		case tagString:
			l, err := binary.ReadUvarint(r)
			if err != nil {
				return nil, spillCorrupt(err)
			}
			if l > uint64(max) {
				return nil, spillCorrupt(nil)
			}
			if vals[i], err = readSpillString(r, int(l), buf); err != nil {
				return nil, spillCorrupt(err)
			}
		default:
			return nil, spillCorrupt(nil)
		}
	}
	return vals, nil
}

// readSpillString reads a string of l bytes from r, a short one through
// buf.
func readSpillString(r spillReader, l int, buf *[]byte) (string, error) {
	if l < smallSpillString {
		if cap(*buf) < l {
			*buf = make([]byte, smallSpillString)
		}
		b := (*buf)[:l]
		_, err := io.ReadFull(r, b)
		return string(b), err
	}
	var sb strings.Builder
	sb.Grow(l)
	n, err := io.CopyN(&sb, r, int64(l))
	if err == io.EOF && n < int64(l) {
		err = io.ErrUnexpectedEOF
	}
	return sb.String(), err
}

// spillCorrupt is errSpillCorrupt, with what reading found when there is
// something to say.
func spillCorrupt(err error) error {
	if err == nil || err == io.EOF {
		return errSpillCorrupt
	}
	return fmt.Errorf("%w: %w", errSpillCorrupt, err)
}
