// The "ndjson" and "ndjson.gz" codecs: one JSON object per line, columns in
// kind order, nulls omitted; gzip by github.com/klauspost/compress.

package spool

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

// The built-in format names.
const (
	FormatNDJSON   = "ndjson"
	FormatNDJSONGz = "ndjson.gz"
)

func init() {
	Register(ndjsonCodec{})
	Register(ndjsonGzCodec{level: gzip.BestSpeed})
}

// readBufSize is the read buffer of the decoders and the flush threshold
// of the encoders.
const readBufSize = 64 << 10

// bufSizeFor sizes a plain file's read buffer: the file itself when it is
// smaller than readBufSize (bufio's minimum is 16 bytes).
func bufSizeFor(size int64) int {
	return int(min(max(size+1, 16), readBufSize))
}

type ndjsonCodec struct{}

func (ndjsonCodec) Name() string      { return FormatNDJSON }
func (ndjsonCodec) Extension() string { return ".ndjson" }

func (ndjsonCodec) NewEncoder(w io.Writer, kind *recordstore.Kind) (Encoder, error) {
	return newLineEncoder(w, kind, nil), nil
}

func (ndjsonCodec) wrapLines(w io.Writer) (io.Writer, func() error, error) {
	return w, func() error { return nil }, nil
}

func (ndjsonCodec) NewDecoder(r io.ReaderAt, size int64, kind *recordstore.Kind, lim Limits) (Decoder, error) {
	src := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), bufSizeFor(size))
	return newLineDecoder(src, kind, lim, nil), nil
}

type ndjsonGzCodec struct{ level int }

func (ndjsonGzCodec) Name() string      { return FormatNDJSONGz }
func (ndjsonGzCodec) Extension() string { return ".ndjson.gz" }

func (c ndjsonGzCodec) NewEncoder(w io.Writer, kind *recordstore.Kind) (Encoder, error) {
	gz, err := gzip.NewWriterLevel(w, c.level)
	if err != nil {
		return nil, fmt.Errorf("ndjson.gz encoder: %w", err)
	}
	return newLineEncoder(gz, kind, gz), nil
}

func (c ndjsonGzCodec) wrapLines(w io.Writer) (io.Writer, func() error, error) {
	gz, err := gzip.NewWriterLevel(w, c.level)
	if err != nil {
		return nil, nil, fmt.Errorf("ndjson.gz encoder: %w", err)
	}
	return gz, gz.Close, nil
}

func (ndjsonGzCodec) NewDecoder(r io.ReaderAt, size int64, kind *recordstore.Kind, lim Limits) (Decoder, error) {
	src := &ioErrReader{r: io.NewSectionReader(r, 0, size)}
	gz, err := gzip.NewReader(bufio.NewReaderSize(src, readBufSize))
	if err != nil {
		return nil, gzipErr(err)
	}
	return newLineDecoder(bufio.NewReaderSize(gz, readBufSize), kind, lim, gz), nil
}

// ioErrReader marks errors of the underlying file so that the decoder can
// tell an I/O failure from corrupt gzip data.
type ioErrReader struct{ r io.Reader }

type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

func (r *ioErrReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &ioError{err}
	}
	return n, err
}

// gzipErr classifies an error of the gzip reader: I/O failures pass
// through, anything else means the file is corrupt or truncated.
func gzipErr(err error) error {
	var ioe *ioError
	if errors.As(err, &ioe) {
		return fmt.Errorf("read gzip data: %w", ioe.err)
	}
	return recordstore.Invalidf("corrupt or truncated gzip data: %v", err)
}

// rowAppender turns rows of one kind into JSON lines.
type rowAppender struct {
	kind *recordstore.Kind
	keys [][]byte // `"name":` per column
}

func newRowAppender(kind *recordstore.Kind) *rowAppender {
	keys := make([][]byte, len(kind.Columns))
	for i, c := range kind.Columns {
		keys[i] = append(strconv.AppendQuote(nil, c.Name), ':')
	}
	return &rowAppender{kind: kind, keys: keys}
}

// appendRow appends the JSON line of vals, newline included. On error buf
// is returned as it was.
func (a *rowAppender) appendRow(buf []byte, vals recordstore.Values) ([]byte, error) {
	if len(vals) != len(a.kind.Columns) {
		return buf, recordstore.Invalidf("kind %s: %d values for %d columns", a.kind.Name, len(vals), len(a.kind.Columns))
	}
	mark := len(buf)
	buf = append(buf, '{')
	first := true
	for i, v := range vals {
		if v == nil {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, a.keys[i]...)
		var err error
		if buf, err = appendValue(buf, a.kind.Columns[i].Type, v); err != nil {
			return buf[:mark], recordstore.Invalidf("kind %s: column %s: %s", a.kind.Name, a.kind.Columns[i].Name, recordstore.InvalidText(err))
		}
	}
	return append(buf, '}', '\n'), nil
}

// lineEncoder writes rows as JSON lines. Output is buffered up to
// readBufSize; Close flushes it and closes the gzip stream, if any.
type lineEncoder struct {
	w   io.Writer
	gz  *gzip.Writer
	row *rowAppender
	buf []byte
	err error // sticky write error
}

func newLineEncoder(w io.Writer, kind *recordstore.Kind, gz *gzip.Writer) *lineEncoder {
	return &lineEncoder{w: w, gz: gz, row: newRowAppender(kind), buf: make([]byte, 0, readBufSize+4096)}
}

func (e *lineEncoder) Write(vals recordstore.Values) error {
	if e.err != nil {
		return e.err
	}
	var err error
	if e.buf, err = e.row.appendRow(e.buf, vals); err != nil {
		return err
	}
	if len(e.buf) >= readBufSize {
		return e.flush()
	}
	return nil
}

func (e *lineEncoder) flush() error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = fmt.Errorf("write ndjson: %w", err)
		return e.err
	}
	e.buf = e.buf[:0]
	return nil
}

func (e *lineEncoder) Close() error {
	if err := e.flush(); err != nil {
		return err
	}
	if e.gz != nil {
		if err := e.gz.Close(); err != nil {
			e.err = fmt.Errorf("finish gzip stream: %w", err)
			return e.err
		}
	}
	e.err = errors.New("ndjson encoder closed")
	return nil
}

// appendValue appends the JSON form of one stored value of type t.
func appendValue(buf []byte, t recordstore.ColumnType, v any) ([]byte, error) {
	switch t {
	case recordstore.TypeString:
		if s, ok := v.(string); ok {
			return appendString(buf, s)
		}
	case recordstore.TypeDatetime:
		if s, ok := v.(string); ok {
			if !recordstore.IsStoredDatetime(s) {
				return buf, recordstore.Invalidf("datetime %s is not in the stored form %s", recordstore.Quote(s), recordstore.DatetimeLayout)
			}
			// Digits and punctuation only: nothing to escape.
			buf = append(buf, '"')
			buf = append(buf, s...)
			return append(buf, '"'), nil
		}
	case recordstore.TypeInteger:
		if n, ok := v.(int64); ok {
			return strconv.AppendInt(buf, n, 10), nil
		}
	case recordstore.TypeNumber:
		if f, ok := v.(float64); ok {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return buf, recordstore.Invalidf("%v is not a finite number", f)
			}
			if f > -1e6 && f < 1e6 && f == float64(int64(f)) && (f != 0 || !math.Signbit(f)) {
				// What 'g' gives for a whole number below a million, sooner.
				return strconv.AppendInt(buf, int64(f), 10), nil
			}
			if out, ok := appendShortDecimal(buf, f); ok {
				return out, nil
			}
			return strconv.AppendFloat(buf, f, 'g', -1, 64), nil
		}
	case recordstore.TypeBool:
		if n, ok := v.(int64); ok && (n == 0 || n == 1) {
			return strconv.AppendBool(buf, n == 1), nil
		}
	case recordstore.TypeJSON:
		if s, ok := v.(string); ok {
			b := readOnlyBytes(s)
			if err := recordstore.CheckJSON(b); err != nil {
				return buf, err
			}
			if !jsonx.HasSpace(b) {
				return append(buf, b...), nil // compact already, as stored values are
			}
			return jsonx.AppendCompact(buf, b[jsonx.Space(b, 0):]), nil
		}
	}
	return buf, recordstore.Invalidf("%T is not a stored %s value", v, t)
}

// appendShortDecimal appends f, and reports true, when f is not whole, its
// magnitude is at least 0.001 and below a million, and it is the double
// nearest to a decimal of one to three fractional digits (0.5, 3.25,
// 1234.125, -0.001): the bytes strconv's 'g' with the shortest precision
// gives for it, without its general algorithm. It appends nothing and
// reports false for any other f.
//
// Why these are the bytes of 'g': m/1000 computed in floating point is the
// double nearest to the decimal m/1000 (both operands are exact), so when
// it equals |f| that decimal reads back as f. No other decimal of at most
// three fractional digits does (it would be at least half a unit of its
// last digit away from f, far more than f's spacing below a million), so
// the shortest is m/1000 without its trailing zeros, and 'g' writes it
// without an exponent in this range.
func appendShortDecimal(buf []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1e-3 && a < 1e6) {
		return buf, false
	}
	// One scale serves all three lengths: when a decimal of k <= 3
	// digits is nearest to a, so is the same decimal padded to three
	// digits, m/1000 (an exact quotient of exact operands); its trailing
	// zeros are then dropped.
	m := math.Round(a * 1000)
	if m/1000 != a {
		return buf, false
	}
	n := int64(m)
	frac, digits := n%1000, 3
	if frac == 0 {
		return buf, false // whole
	}
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	if f < 0 {
		buf = append(buf, '-')
	}
	buf = strconv.AppendInt(buf, n/1000, 10)
	buf = append(buf, '.')
	switch digits {
	case 3:
		buf = append(buf, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	case 2:
		buf = append(buf, byte('0'+frac/10), byte('0'+frac%10))
	default:
		buf = append(buf, byte('0'+frac))
	}
	return buf, true
}

// appendString appends s as a JSON string, escaping only what JSON
// requires (quote, backslash, control characters).
func appendString(buf []byte, s string) ([]byte, error) {
	// Most strings are printable ASCII with no quote or backslash: one
	// look at each byte, then a single copy.
	i := 0
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	if i == len(s) {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"'), nil
	}
	if !utf8.ValidString(s[i:]) {
		return buf, recordstore.Invalidf("string is not valid UTF-8")
	}
	buf = append(buf, '"')
	start := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"'), nil
}

// plainASCII marks the bytes a JSON string holds as they are and that
// are whole UTF-8 characters: printable ASCII but '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// readOnlyBytes views s as a byte slice without copying it. The slice
// must never be written to.
func readOnlyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

const hexDigit = "0123456789abcdef"

// lineDecoder reads JSON lines. Lines holding only whitespace are skipped;
// the last line may lack its newline. A UTF-8 byte order mark (EF BB BF)
// at the very start of the stream is skipped, as editors on some systems
// write one; anywhere else it is data (and no JSON).
type lineDecoder struct {
	r     *bufio.Reader
	gz    *gzip.Reader
	sc    *rowScanner
	lim   Limits
	rows  int64
	bytes int64
	line  int64
	acc   []byte // a line longer than the read buffer
	err   error  // sticky
}

func newLineDecoder(r *bufio.Reader, kind *recordstore.Kind, lim Limits, gz *gzip.Reader) *lineDecoder {
	return &lineDecoder{r: r, gz: gz, sc: newRowScanner(kind), lim: lim}
}

func (d *lineDecoder) Next() (recordstore.Values, error) {
	if d.err != nil {
		return nil, d.err
	}
	for {
		line, err := d.readLine()
		if err != nil {
			d.err = err
			return nil, err
		}
		if d.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if skipWS(line, 0) == len(line) {
			continue
		}
		d.rows++
		if d.lim.MaxRows > 0 && d.rows > d.lim.MaxRows {
			d.err = recordstore.Errorf(ErrTooManyRows, "more than %d rows", d.lim.MaxRows)
			return nil, d.err
		}
		vals, err := d.sc.scan(line)
		if err != nil {
			d.err = fmt.Errorf("line %d: %w", d.line, err)
			return nil, d.err
		}
		return vals, nil
	}
}

// utf8BOM is the byte order mark, U+FEFF, in UTF-8.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// readLine returns the next line without its newline, io.EOF at the end.
func (d *lineDecoder) readLine() ([]byte, error) {
	d.acc = d.acc[:0]
	for {
		chunk, err := d.r.ReadSlice('\n')
		d.bytes += int64(len(chunk))
		if d.lim.MaxBytes > 0 && d.bytes > d.lim.MaxBytes {
			return nil, recordstore.Errorf(ErrTooLarge, "more than %d bytes of rows", d.lim.MaxBytes)
		}
		switch {
		case err == nil:
			d.line++
			if len(d.acc) > 0 {
				return append(d.acc, chunk[:len(chunk)-1]...), nil
			}
			return chunk[:len(chunk)-1], nil
		case err == bufio.ErrBufferFull:
			d.acc = growAppend(d.acc, chunk, d.lim.MaxBytes)
		case err == io.EOF:
			if len(d.acc)+len(chunk) == 0 {
				return nil, io.EOF
			}
			d.line++
			return append(d.acc, chunk...), nil
		default:
			if d.gz != nil {
				return nil, gzipErr(err)
			}
			return nil, fmt.Errorf("read ndjson: %w", err)
		}
	}
}

// growAppend appends chunk to acc, doubling the capacity when it grows so
// that a long line costs at most about twice its length in allocations,
// but never growing past limit (the byte cap, when there is one) plus one
// read buffer.
func growAppend(acc, chunk []byte, limit int64) []byte {
	if need := len(acc) + len(chunk); need > cap(acc) {
		c := max(2*cap(acc), need, readBufSize)
		if limit > 0 && int64(c) > limit+readBufSize {
			c = max(need, int(limit+readBufSize))
		}
		grown := make([]byte, len(acc), c)
		copy(grown, acc)
		acc = grown
	}
	return append(acc, chunk...)
}

func (d *lineDecoder) Close() error {
	if d.err == nil {
		d.err = errors.New("ndjson decoder closed")
	}
	if d.gz != nil {
		return d.gz.Close()
	}
	return nil
}
