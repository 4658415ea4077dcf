// The codec registry: the data-file formats a batch may use, and the
// encoder/decoder interfaces every format implements.

package spool

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// Limits bound what a decoder may read. A zero field means unlimited.
type Limits struct {
	// MaxRows is the largest number of rows the decoder returns; reading
	// one more fails with ErrTooManyRows.
	MaxRows int64
	// MaxBytes is the largest number of decoded (uncompressed) bytes the
	// decoder consumes; reading more fails with ErrTooLarge.
	MaxBytes int64
}

// Encoder writes normalized rows of one kind.
type Encoder interface {
	// Write encodes one row of normalized values (see recordstore.Values).
	Write(vals recordstore.Values) error
	// Close flushes buffered output; it does not close the underlying
	// writer.
	Close() error
}

// Decoder streams normalized rows; Next returns io.EOF after the last row.
type Decoder interface {
	// Next returns the next row, io.EOF after the last one, or an error
	// wrapping recordstore.ErrInvalid (a row that does not fit the kind)
	// or recordstore.ErrCapacity (a limit was exceeded).
	Next() (recordstore.Values, error)
	// Close releases the decoder's resources; it does not close the
	// underlying reader.
	Close() error
}

// Codec is one data-file format.
type Codec interface {
	// Name is the format name written into manifests: "ndjson",
	// "ndjson.gz", "parquet".
	Name() string
	// Extension is the file name suffix of a data file: ".ndjson",
	// ".ndjson.gz", ".parquet".
	Extension() string
	// NewEncoder returns an encoder writing rows of kind to w.
	NewEncoder(w io.Writer, kind *recordstore.Kind) (Encoder, error)
	// NewDecoder returns a decoder reading rows of kind from the size
	// bytes of r, bounded by lim.
	NewDecoder(r io.ReaderAt, size int64, kind *recordstore.Kind, lim Limits) (Decoder, error)
}

var registry = struct {
	sync.RWMutex
	codecs map[string]Codec
}{codecs: map[string]Codec{}}

// Register adds c to the registry under c.Name(). It panics when a codec of
// that name is already registered (a programming error at init time).
func Register(c Codec) {
	registry.Lock()
	defer registry.Unlock()
	name := c.Name()
	if _, dup := registry.codecs[name]; dup {
		panic(fmt.Sprintf("spool: codec %q registered twice", name))
	}
	registry.codecs[name] = c
}

// Lookup returns the codec registered under name, or an error wrapping
// ErrUnknownCodec (and so recordstore.ErrInvalid) when there is none.
func Lookup(name string) (Codec, error) {
	registry.RLock()
	defer registry.RUnlock()
	c, ok := registry.codecs[name]
	if !ok {
		return nil, fmt.Errorf("%w %s", ErrUnknownCodec, recordstore.Quote(name))
	}
	return c, nil
}

// Formats returns the names of the registered codecs, sorted.
func Formats() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.codecs))
	for name := range registry.codecs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
