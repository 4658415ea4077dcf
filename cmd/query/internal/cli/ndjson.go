// Decoding append input: NDJSON, one JSON object per line, into rows.
// Integers stay exact (json.Number); object and array values are kept as
// the JSON text written, for json columns.

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fb46ecde/records/recordstore"
)

// rowsInput is decoded append input: the rows, and for each the line of
// the input it came from, for error messages.
type rowsInput struct {
	name  string
	rows  []recordstore.Row
	lines []int
}

// decodeNDJSON reads every line of r as one row. Blank lines are skipped; a
// line that is not exactly one JSON object is ErrInvalid naming its line
// number, and so is input without any row. name is how errors call r.
func decodeNDJSON(r io.Reader, name string) (rowsInput, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	in := rowsInput{name: name}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return rowsInput{}, fmt.Errorf("read %s: %w", name, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			row, derr := decodeRow(line)
			if derr != nil {
				return rowsInput{}, fmt.Errorf("%w: %s line %d: %w", recordstore.ErrInvalid, name, n, derr)
			}
			in.rows = append(in.rows, row)
			in.lines = append(in.lines, n)
		}
		if err != nil {
			break
		}
	}
	if len(in.rows) == 0 {
		return rowsInput{}, recordstore.Invalidf("%s: no rows (empty input)", name)
	}
	return in, nil
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
