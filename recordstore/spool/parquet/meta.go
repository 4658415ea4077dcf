// Metadata checks: row counts and column chunk ranges and sizes, checked
// against the file and the limits before any page is read.

package parquet

import (
	"fmt"
	"math"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// checkMetadata checks the row groups of the footer: row counts that add up
// and fit Limits.MaxRows, one column chunk per leaf column with as many
// values as rows, chunk byte ranges inside the data region, no encrypted or
// external chunks, and declared uncompressed sizes that fit
// Limits.MaxBytes.
func (d *decoder) checkMetadata() error {
	total := d.meta.GetNumRows()
	if total < 0 {
		return corruptf("footer declares %d rows", total)
	}
	if d.lim.MaxRows > 0 && total > d.lim.MaxRows {
		return fmt.Errorf("%w: file declares %d rows, the limit is %d", spool.ErrTooManyRows, total, d.lim.MaxRows)
	}
	var rows, uncompressed int64
	for i := 0; i < d.meta.NumRowGroups(); i++ {
		rgm := d.meta.RowGroup(i)
		n := rgm.NumRows()
		if n < 0 || n > total-rows {
			return corruptf("row group %d declares %d rows, more than the file's %d", i, n, total)
		}
		rows += n
		size, err := d.checkRowGroup(i, n)
		if err != nil {
			return err
		}
		uncompressed = addCapped(uncompressed, size)
	}
	if rows != total {
		return corruptf("row groups hold %d rows, the footer declares %d", rows, total)
	}
	if d.lim.MaxBytes > 0 && uncompressed > d.lim.MaxBytes {
		return fmt.Errorf("%w: column chunks declare %d uncompressed bytes, the limit is %d", spool.ErrTooLarge, uncompressed, d.lim.MaxBytes)
	}
	return nil
}

// checkRowGroup checks the column chunks of row group i (of rows rows) and
// returns their declared uncompressed size.
func (d *decoder) checkRowGroup(i int, rows int64) (int64, error) {
	rgm := d.meta.RowGroup(i)
	if rgm.NumColumns() != d.meta.Schema.NumColumns() {
		return 0, corruptf("row group %d has %d column chunks for %d columns", i, rgm.NumColumns(), d.meta.Schema.NumColumns())
	}
	var size int64
	for j := 0; j < rgm.NumColumns(); j++ {
		name := d.meta.Schema.Column(j).Name()
		cc, err := rgm.ColumnChunk(j)
		if err != nil {
			return 0, corruptf("row group %d: column %s: %v", i, name, err)
		}
		if cc.CryptoMetadata() != nil {
			return 0, recordstore.Errorf(ErrUnsupported, "row group %d: column %s is encrypted", i, name)
		}
		if cc.FilePath() != "" {
			return 0, recordstore.Errorf(ErrUnsupported, "row group %d: column %s lives in another file", i, name)
		}
		if cc.Type() != d.meta.Schema.Column(j).PhysicalType() {
			return 0, corruptf("row group %d: column %s: chunk type %s differs from the schema", i, name, cc.Type())
		}
		if cc.NumValues() != rows {
			return 0, corruptf("row group %d: column %s holds %d values for %d rows", i, name, cc.NumValues(), rows)
		}
		r := columnChunkRange(cc)
		if r.start < int64(len(magic)) || r.length < 0 || r.length > d.dataEnd-r.start {
			return 0, corruptf("row group %d: column %s: bytes [%d, +%d) lie outside the data", i, name, r.start, r.length)
		}
		u := cc.TotalUncompressedSize()
		if u < 0 {
			return 0, corruptf("row group %d: column %s declares %d uncompressed bytes", i, name, u)
		}
		size = addCapped(size, u)
	}
	return size, nil
}

// addCapped adds two non-negative sizes, saturating instead of overflowing.
func addCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
