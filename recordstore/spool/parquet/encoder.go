// The encoder: buffers normalized rows column by column and writes them as
// bounded row groups of a Parquet file.

package parquet

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Row group bounds of the encoder: a row group is written when it holds
// RowGroupRows rows or about RowGroupBytes bytes of raw values, whichever
// comes first. They bound the encoder's memory and let readers stream.
const (
	RowGroupRows  = 64 * 1024
	RowGroupBytes = 64 << 20
)

// encoder implements spool.Encoder.
type encoder struct {
	kind     *recordstore.Kind
	maxRows  int   // row group bound in rows
	maxBytes int64 // row group bound in raw bytes
	fw       *file.Writer
	cols     []columnBuffer
	rows     int   // rows buffered in the current row group
	bytes    int64 // raw bytes buffered in the current row group
	err      error // sticky: the first write error; the file is unusable after it
	done     bool  // Close has run
}

var _ spool.Encoder = (*encoder)(nil)

// writerOnly hides any Close method of the caller's writer: file.Writer
// closes a sink that is an io.Closer, and Close must not.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

func writerProperties() *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1), // zstd "fastest": spool files are short-lived
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithDictionaryDefault(true),
		parquet.WithStats(true),
		parquet.WithPageIndexEnabled(false),
		parquet.WithBloomFilterEnabled(false),
		parquet.WithMaxRowGroupLength(RowGroupRows),
	)
}

func newEncoder(w io.Writer, kind *recordstore.Kind) (*encoder, error) {
	if kind == nil || len(kind.Columns) == 0 {
		return nil, recordstore.Invalidf("parquet encoder: a kind with columns is required")
	}
	sc, err := writeSchema(kind)
	if err != nil {
		return nil, err
	}
	e := &encoder{kind: kind, maxRows: RowGroupRows, maxBytes: RowGroupBytes, cols: make([]columnBuffer, len(kind.Columns))}
	for i, c := range kind.Columns {
		e.cols[i] = newColumnBuffer(c, requiredColumn(kind, c))
	}
	e.fw, err = file.NewParquetWriterWithError(writerOnly{w}, sc, file.WithWriterProps(writerProperties()))
	if err != nil {
		return nil, fmt.Errorf("parquet encoder: write header: %w", err)
	}
	return e, nil
}

// Write buffers one row of normalized values. A value of the wrong Go type
// for its column, a null in a required column or a row of the wrong width
// is an ErrInvalid error and leaves the buffered rows unchanged. When the
// row group is full it is written to the underlying writer; an error doing
// so is sticky.
func (e *encoder) Write(vals recordstore.Values) error {
	if e.err != nil {
		return e.err
	}
	if e.done {
		return errors.New("parquet encoder: write after close")
	}
	if len(vals) != len(e.cols) {
		return recordstore.Invalidf("kind %s: row has %d values, want %d", e.kind.Name, len(vals), len(e.cols))
	}
	if err := e.check(vals); err != nil {
		return err
	}
	for i, v := range vals {
		e.bytes += e.cols[i].add(v)
	}
	e.rows++
	if e.rows >= e.maxRows || e.bytes >= e.maxBytes {
		return e.flush()
	}
	return nil
}

// check validates a whole row before any column buffers it, so a bad row
// changes nothing.
func (e *encoder) check(vals recordstore.Values) error {
	for i, v := range vals {
		if err := e.cols[i].check(v); err != nil {
			c := e.kind.Columns[i]
			return recordstore.Invalidf("kind %s: column %s (%s): %s", e.kind.Name, c.Name, c.Type, err)
		}
	}
	return nil
}

// flush writes the buffered rows as one row group.
func (e *encoder) flush() error {
	if e.rows == 0 {
		return nil
	}
	if err := e.writeRowGroup(); err != nil {
		e.err = fmt.Errorf("parquet encoder: write row group: %w", err)
		return e.err
	}
	for _, c := range e.cols {
		c.reset()
	}
	e.rows, e.bytes = 0, 0
	return nil
}

func (e *encoder) writeRowGroup() (err error) {
	defer recoverTo(&err, "write row group")
	rg, err := e.fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for i, c := range e.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return fmt.Errorf("column %s: %w", e.kind.Columns[i].Name, err)
		}
		if err := c.write(cw); err != nil {
			return fmt.Errorf("column %s: %w", e.kind.Columns[i].Name, err)
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("column %s: %w", e.kind.Columns[i].Name, err)
		}
	}
	return rg.Close()
}

// Close writes the buffered rows and the footer. It does not close the
// underlying writer. When it fails the writer holds a truncated file that
// no reader accepts (there is no footer); the caller discards it.
func (e *encoder) Close() (err error) {
	if e.done {
		return e.err
	}
	e.done = true
	if e.err != nil {
		return e.err
	}
	if err := e.flush(); err != nil {
		return err
	}
	defer recoverTo(&err, "write footer")
	if err := e.fw.Close(); err != nil {
		e.err = fmt.Errorf("parquet encoder: write footer: %w", err)
		return e.err
	}
	return nil
}
