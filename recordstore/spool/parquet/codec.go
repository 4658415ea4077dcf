// The codec value registered with the spool under the name "parquet".

package parquet

import (
	"io"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Name is the format name the codec registers under.
const Name = "parquet"

// Extension is the file name suffix of a Parquet data file.
const Extension = ".parquet"

func init() {
	spool.Register(Codec{})
}

// Codec is the Parquet spool codec. The zero value is ready to use; it is
// registered under Name when the package is imported.
type Codec struct{}

var _ spool.Codec = Codec{}

// Name returns "parquet".
func (Codec) Name() string { return Name }

// Extension returns ".parquet".
func (Codec) Extension() string { return Extension }

// NewEncoder returns an encoder writing a Parquet file of kind's rows to w.
// The magic bytes are written at once; rows are buffered and written a row
// group at a time; Close writes the last row group and the footer. Until
// Close returns nil, w holds an incomplete file that no reader accepts.
func (Codec) NewEncoder(w io.Writer, kind *recordstore.Kind) (spool.Encoder, error) {
	return newEncoder(w, kind)
}

// NewDecoder returns a decoder streaming the rows of the Parquet file held
// in the size bytes of r, as normalized values of kind, bounded by lim. It
// reads and checks the footer before returning.
func (Codec) NewDecoder(r io.ReaderAt, size int64, kind *recordstore.Kind, lim spool.Limits) (spool.Decoder, error) {
	return newDecoder(r, size, kind, lim)
}
