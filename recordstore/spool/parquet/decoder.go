// The decoder: opens a Parquet file through checked footer and metadata,
// then streams its rows one row group and one batch at a time.

package parquet

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// DefaultPageLimit is the largest page (compressed or not) a decoder reads
// when spool.Limits.MaxBytes does not set a smaller one.
const DefaultPageLimit = 32 << 20

// readBufferSize is the read buffer of each column chunk stream.
const readBufferSize = 64 << 10

// decoder implements spool.Decoder.
type decoder struct {
	kind    *recordstore.Kind
	lim     spool.Limits
	src     *io.SectionReader
	size    int64
	dataEnd int64 // where the footer starts
	pageCap int64
	meta    *metadata.FileMetaData
	fr      *file.Reader
	binds   []binding

	rg      int      // next row group to open
	rgLeft  int64    // rows of the open row group not yet batched
	cursors []cursor // per kind column; nil for a column absent from the file
	batch   [][]any  // per kind column: the current batch's values
	pos, n  int      // next row in the batch; rows in the batch
	rows    int64    // rows returned
	bytes   int64    // decoded bytes so far
	err     error    // sticky: once set, Next returns it
}

var _ spool.Decoder = (*decoder)(nil)

var errClosed = errors.New("parquet decoder: closed")

func newDecoder(r io.ReaderAt, size int64, kind *recordstore.Kind, lim spool.Limits) (dec *decoder, err error) {
	if kind == nil || len(kind.Columns) == 0 {
		return nil, recordstore.Invalidf("parquet decoder: a kind with columns is required")
	}
	if r == nil || size < 0 {
		return nil, recordstore.Invalidf("parquet decoder: a reader and a non-negative size are required")
	}
	defer recoverCorrupt(&err, "open")
	d := &decoder{kind: kind, lim: lim, src: io.NewSectionReader(r, 0, size), size: size}
	d.pageCap = DefaultPageLimit
	if lim.MaxBytes > 0 {
		d.pageCap = min(d.pageCap, lim.MaxBytes)
	}
	if d.meta, d.dataEnd, err = readFooter(d.src, size, lim); err != nil {
		return nil, err
	}
	if d.binds, err = bindColumns(d.meta.Schema, kind); err != nil {
		return nil, err
	}
	if err := d.checkMetadata(); err != nil {
		return nil, err
	}
	if err := d.openReader(); err != nil {
		return nil, err
	}
	d.batch = make([][]any, len(kind.Columns))
	for i := range d.batch {
		d.batch[i] = make([]any, batchRows)
	}
	d.cursors = make([]cursor, len(kind.Columns))
	return d, nil
}

// openReader builds arrow-go's file reader over the vetted metadata, with a
// capped allocator and streamed (not whole-chunk) reads.
func (d *decoder) openReader() error {
	props := parquet.NewReaderProperties(cappedAllocator{mem: memory.NewGoAllocator(), max: int(d.pageCap) + maxPageHeaderBytes})
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferSize
	props.MaxCompressedPageSize = d.pageCap
	props.MaxUncompressedPageSize = d.pageCap
	fr, err := file.NewParquetReader(d.src, file.WithReadProps(props), file.WithMetadata(d.meta))
	if err != nil {
		return corruptf("open: %v", err)
	}
	d.fr = fr
	return nil
}

// Next returns the next row as normalized values, io.EOF after the last
// row, or an error: ErrCorrupt or ErrSchemaMismatch (both
// recordstore.ErrInvalid), an ErrInvalid error for a value the kind does
// not accept, spool.ErrTooManyRows or spool.ErrTooLarge. Errors are sticky.
func (d *decoder) Next() (vals recordstore.Values, err error) {
	if d.err != nil {
		return nil, d.err
	}
	defer func() {
		if err != nil {
			d.err = err
		}
	}()
	defer recoverCorrupt(&err, "read")
	for d.pos == d.n {
		if err := d.refill(); err != nil {
			return nil, err
		}
	}
	vals = make(recordstore.Values, len(d.batch))
	for i, col := range d.batch {
		vals[i] = col[d.pos]
	}
	d.pos++
	d.rows++
	if d.lim.MaxRows > 0 && d.rows > d.lim.MaxRows {
		return nil, fmt.Errorf("%w: more than %d rows", spool.ErrTooManyRows, d.lim.MaxRows)
	}
	if err := d.kind.CheckRequired(vals); err != nil {
		return nil, fmt.Errorf("row %d: %w", d.rows, err)
	}
	return vals, nil
}

// refill reads the next batch of rows, opening the next row group when the
// current one is used up; io.EOF after the last row group.
func (d *decoder) refill() error {
	for d.rgLeft == 0 {
		if err := d.closeRowGroup(); err != nil {
			return err
		}
		if d.rg == d.meta.NumRowGroups() {
			return io.EOF
		}
		if err := d.openRowGroup(d.rg); err != nil {
			return err
		}
		d.rg++
	}
	n := int(min(d.rgLeft, batchRows))
	for i, c := range d.cursors {
		if c == nil {
			continue // absent column: its batch stays all nil
		}
		size, err := c.fill(d.batch[i][:n])
		if err != nil {
			return fmt.Errorf("row group %d: %w", d.rg-1, err)
		}
		d.bytes += size
	}
	if d.lim.MaxBytes > 0 && d.bytes > d.lim.MaxBytes {
		return fmt.Errorf("%w: rows decode to more than %d bytes", spool.ErrTooLarge, d.lim.MaxBytes)
	}
	d.rgLeft -= int64(n)
	d.pos, d.n = 0, n
	return nil
}

// openRowGroup scans the page headers of row group i, then opens a cursor
// on each of its column chunks the kind reads.
func (d *decoder) openRowGroup(i int) error {
	rgm := d.meta.RowGroup(i)
	if err := d.scanRowGroup(rgm); err != nil {
		return fmt.Errorf("row group %d: %w", i, err)
	}
	rgr := d.fr.RowGroup(i)
	for k, b := range d.binds {
		if b.File < 0 {
			continue
		}
		cr, err := rgr.Column(b.File)
		if err != nil {
			return corruptf("row group %d: column %s: %v", i, b.Column.Name, err)
		}
		if d.cursors[k], err = newCursor(b, cr); err != nil {
			return err
		}
	}
	d.rgLeft = rgm.NumRows()
	return nil
}

// closeRowGroup checks that every column of the finished row group is used
// up, and drops its cursors.
func (d *decoder) closeRowGroup() error {
	for k, c := range d.cursors {
		if c == nil {
			continue
		}
		if err := c.exhausted(); err != nil {
			return fmt.Errorf("row group %d: %w", d.rg-1, err)
		}
		d.cursors[k] = nil
	}
	return nil
}

// scanRowGroup runs the page scan over the column chunks the kind reads.
func (d *decoder) scanRowGroup(rgm *metadata.RowGroupMetaData) error {
	for _, b := range d.binds {
		if b.File < 0 {
			continue
		}
		cc, err := rgm.ColumnChunk(b.File)
		if err != nil {
			return corruptf("column %s: %v", b.Column.Name, err)
		}
		descr := d.meta.Schema.Column(b.File)
		s := pageScan{
			src: d.src, size: d.size, dataEnd: d.dataEnd, pageCap: d.pageCap,
			column: b.Column.Name, phys: descr.PhysicalType(), typeLen: descr.TypeLength(),
		}
		if err := s.scan(columnChunkRange(cc), cc.NumValues()); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the decoder; it does not close the underlying reader.
// Next fails after Close.
func (d *decoder) Close() error {
	d.err = errClosed
	d.fr, d.cursors, d.batch = nil, nil, nil
	return nil
}
