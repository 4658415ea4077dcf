// Test hooks into package parquet.

package parquet

import (
	"io"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// NewEncoderWithBudget returns an encoder whose row groups are cut at rows
// rows or bytes raw bytes, so tests can make multi-row-group files cheaply.
func NewEncoderWithBudget(w io.Writer, kind *recordstore.Kind, rows int, bytes int64) (spool.Encoder, error) {
	e, err := newEncoder(w, kind)
	if err != nil {
		return nil, err
	}
	e.maxRows, e.maxBytes = rows, bytes
	return e, nil
}

// BatchRows is the decoder's batch size.
const BatchRows = batchRows
