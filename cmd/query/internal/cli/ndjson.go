// Decoding row input: NDJSON, one JSON object per line, read a line at a
// time. Integers stay exact (json.Number); object and array values are kept
// as the JSON text written, for json columns.

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// rowReader reads NDJSON input one row at a time, so that a bad line is
// reported as soon as it is read and the input is never held in memory as
// a whole.
type rowReader struct {
	br   *bufio.Reader
	name string // how errors call the input: "stdin" or the file path
	line int    // the line last read
	rows int    // rows returned so far
	done bool
	long []byte // a line longer than the read buffer, reassembled
}

func newRowReader(r io.Reader, name string) *rowReader {
	return &rowReader{br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Next returns the next row and the line it is on, skipping blank lines;
// io.EOF after the last row. A line that is not exactly one JSON object is
// ErrInvalid naming its line, and so is input without any row.
func (r *rowReader) Next() (recordstore.Row, int, error) {
	line, err := r.nextLine()
	if err != nil {
		return nil, 0, err
	}
	row, derr := decodeRow(line)
	if derr != nil {
		return nil, 0, r.lineErr(derr)
	}
	return row, r.line, nil
}

// NextValues is Next for rows of the kind of sc, returned as the values
// spool.Normalize makes of the row, and the line they are on. A row that
// does not fit the kind is an error naming its line (wrapping
// ErrInvalid). Lines are parsed by the spool's scanner, straight into
// values; a line it refuses is read again the way Next reads it, so that
// every error (and the values of a line only Next's reading takes) is
// Next's followed by spool.Normalize's.
func (r *rowReader) NextValues(sc *valueScanner) (recordstore.Values, int, error) {
	line, err := r.nextLine()
	if err != nil {
		return nil, 0, err
	}
	vals, err := sc.scan(line)
	if err == nil {
		return vals, r.line, nil
	}
	row, derr := decodeRow(line)
	if derr != nil {
		return nil, 0, r.lineErr(derr)
	}
	if vals, err = spool.Normalize(sc.kind, row); err != nil {
		return nil, 0, fmt.Errorf("%s line %d: %w", r.name, r.line, err)
	}
	return vals, r.line, nil
}

// nextLine returns the next line that is not blank, valid until the next
// call; io.EOF after the last row, and ErrInvalid for input without any
// row.
func (r *rowReader) nextLine() ([]byte, error) {
	for !r.done {
		line, err := r.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", r.name, err)
		}
		r.done = err != nil
		if len(line) == 0 && r.done {
			break // the last line ended in a newline: nothing more to count
		}
		r.line++
		if r.line == 1 { // a byte order mark starts the input: skip it (docs/cli.md)
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.rows++
		return line, nil
	}
	if r.rows == 0 {
		return nil, recordstore.Invalidf("%s: no rows (empty input)", r.name)
	}
	return nil, io.EOF
}

// readLine returns the next line with its newline (without one at the end
// of the input, then with io.EOF), in the read buffer when it fits.
func (r *rowReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.long = append(r.long, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, err
		}
	}
}

// valueScanner parses lines into the values of one kind (see
// rowReader.NextValues).
type valueScanner struct {
	kind *recordstore.Kind
	sc   *spool.LineScanner
}

func newValueScanner(kind *recordstore.Kind) *valueScanner {
	return &valueScanner{kind: kind, sc: spool.NewLineScanner(kind)}
}

// scan returns the values of line, as NextValues does (a JSON null is a
// null json column, as the store makes it on every path).
func (v *valueScanner) scan(line []byte) (recordstore.Values, error) {
	return v.sc.Scan(line)
}

// lineErr returns an ErrInvalid error naming the line last read.
func (r *rowReader) lineErr(err error) error {
	return recordstore.Errorf(recordstore.ErrInvalid, "%s line %d: %w", r.name, r.line, err)
}

// decodeRow decodes one line holding exactly one JSON object.
func decodeRow(line []byte) (recordstore.Row, error) {
	line = bytes.TrimSpace(line)
	if line[0] != '{' {
		return nil, errors.New("want a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if err := recordstore.CheckJSON(line); err != nil { // UTF-8, surrogates, a name twice
		return nil, errors.New(recordstore.InvalidText(err))
	}
	row := make(recordstore.Row, len(fields))
	for name, raw := range fields {
		v, err := decodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		row[name] = v
	}
	return row, nil
}

// decodeValue turns one JSON value, already known to be well formed, into
// what recordstore.Normalize accepts: json.Number for numbers (exact), the
// raw text for objects and arrays.
func decodeValue(raw json.RawMessage) (any, error) {
	switch raw[0] {
	case '{', '[':
		return json.RawMessage(bytes.Clone(raw)), nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		return s, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return json.Number(raw), nil
}
