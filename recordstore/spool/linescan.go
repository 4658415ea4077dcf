// LineScanner: the NDJSON codec's row scanner for callers that read lines
// themselves (the CLI's row input).

package spool

import "github.com/fb46ecde/records/recordstore"

// LineScanner parses lines holding one JSON object each into the values
// of a kind, as the "ndjson" codec's decoder does: the values Normalize
// returns for the row encoding/json would decode, without building the
// row (json columns decoded as json.RawMessage, so a JSON null is a null
// column, as it is in Normalize). It is not safe for concurrent use.
type LineScanner struct{ sc *rowScanner }

// NewLineScanner returns a LineScanner for rows of kind.
func NewLineScanner(kind *recordstore.Kind) *LineScanner {
	return &LineScanner{sc: newRowScanner(kind)}
}

// Scan parses line (surrounding JSON whitespace allowed) and returns its
// values in kind's column order. A line that is not one well-formed JSON
// object, or whose values do not fit the kind, is an ErrInvalid error
// naming the byte or the column; the values returned share no memory with
// line.
func (l *LineScanner) Scan(line []byte) (recordstore.Values, error) {
	return l.sc.scan(line)
}
