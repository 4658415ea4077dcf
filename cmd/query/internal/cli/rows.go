// Reading row input against a kind: every row is normalized as it is read
// and a key given twice is refused, with errors naming the input line.

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// openInput opens src, a file path or "-" for stdin, and returns it with
// the name errors should use for it and a function closing it.
func (a *app) openInput(src string) (io.Reader, string, func(), error) {
	if src == "-" {
		return a.env.Stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, src, nil, inputErr(src, err)
	}
	return f, src, func() { _ = f.Close() }, nil
}

// readRows reads every row of in as a row of kind and hands each, with its
// normalized values, to keep. It stops at the first bad line (ErrInvalid
// naming it), at a key repeated in the input (naming both lines), and when
// maxRows > 0 at the row past maxRows (ErrCapacity).
func readRows(in *rowReader, kind *recordstore.Kind, maxRows int64, keep func(recordstore.Row, recordstore.Values)) error {
	keyIdx := kind.KeyIndexes()
	seen := map[string]int{} // key of a row -> its line
	var n int64
	for {
		row, line, err := in.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n++; maxRows > 0 && n > maxRows {
			return fmt.Errorf("%w: %s line %d: more than %d rows", recordstore.ErrCapacity, in.name, line, maxRows)
		}
		vals, err := spool.Normalize(kind, row)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", in.name, line, err)
		}
		if len(keyIdx) > 0 {
			key := keyOf(vals, keyIdx)
			if first, dup := seen[key]; dup {
				return recordstore.Invalidf("%s lines %d and %d: kind %s: the same key %s", in.name, first, line, kind.Name, key)
			}
			seen[key] = line
		}
		keep(row, vals)
	}
}

// keyOf renders the key columns of normalized values (nil, string, int64
// or float64) as JSON, which tells any two different keys apart.
func keyOf(vals recordstore.Values, keyIdx []int) string {
	key := make([]any, len(keyIdx))
	for j, i := range keyIdx {
		key[j] = vals[i]
	}
	b, _ := json.Marshal(key)
	return string(b)
}
