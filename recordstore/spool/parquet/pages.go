// The page scan: before a row group is decoded, each of its column chunks
// is walked page header by page header, so that sizes and value counts
// arrow-go would trust are checked against the chunk, the file and the
// page cap first.

package parquet

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fb46ecde/records/recordstore/spool"
)

// Page types of the Parquet format.
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// maxPageHeaderBytes bounds one page header (statistics included).
const maxPageHeaderBytes = 16 << 20

// pageHeader holds the fields of a page header the scan checks.
type pageHeader struct {
	typ          int32
	uncompressed int32
	compressed   int32
	numValues    int32 // of the header struct that matches typ
	hasType      bool
	hasSizes     int // how many of the two sizes were present
}

// chunkRange is where a column chunk's pages lie in the file.
type chunkRange struct {
	start, length int64
}

// columnChunkRange returns where the pages of cc start and how many bytes
// they take, as arrow-go computes it.
func columnChunkRange(cc *metadata.ColumnChunkMetaData) chunkRange {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
		start = cc.DictionaryPageOffset()
	}
	return chunkRange{start: start, length: cc.TotalCompressedSize()}
}

// pageScan walks the pages of one column chunk.
type pageScan struct {
	src     io.ReaderAt
	size    int64 // file size
	dataEnd int64 // where the footer starts; pages lie before it
	pageCap int64
	column  string
	phys    parquet.Type
	typeLen int
	buf     []byte
}

// scan checks the pages of the chunk at r that must hold values values.
func (p *pageScan) scan(r chunkRange, values int64) error {
	pos, end := r.start, r.start+r.length
	var seen int64
	dict := false
	for seen < values {
		if pos >= end {
			return corruptf("column %s: pages hold %d values, the chunk declares %d", p.column, seen, values)
		}
		h, hlen, err := p.header(pos)
		if err != nil {
			return err
		}
		if err := p.checkSizes(h, pos+hlen); err != nil {
			return err
		}
		switch h.typ {
		case pageDictionary:
			if dict {
				return corruptf("column %s: two dictionary pages in one chunk", p.column)
			}
			dict = true
			if err := p.checkDictionary(h); err != nil {
				return err
			}
		case pageData, pageDataV2:
			if h.numValues < 0 || int64(h.numValues) > values-seen {
				return corruptf("column %s: a page declares %d values, more than the %d left in the chunk", p.column, h.numValues, values-seen)
			}
			seen += int64(h.numValues)
		}
		pos += hlen + int64(h.compressed)
	}
	return nil
}

func (p *pageScan) checkSizes(h pageHeader, body int64) error {
	if !h.hasType || h.hasSizes != 2 {
		return corruptf("column %s: page header lacks its type or sizes", p.column)
	}
	if h.compressed < 0 || h.uncompressed < 0 {
		return corruptf("column %s: page header has a negative size", p.column)
	}
	if int64(h.compressed) > p.dataEnd-body {
		return corruptf("column %s: a page of %d bytes at %d runs past the data", p.column, h.compressed, body)
	}
	if int64(h.uncompressed) > p.pageCap || int64(h.compressed) > p.pageCap {
		return fmt.Errorf("%w: column %s: page of %d bytes (%d compressed) exceeds the page limit of %d",
			spool.ErrTooLarge, p.column, h.uncompressed, h.compressed, p.pageCap)
	}
	return nil
}

// checkDictionary bounds the entries of a dictionary page by what its
// uncompressed bytes can hold in PLAIN encoding; arrow-go sizes the
// dictionary from the declared count.
func (p *pageScan) checkDictionary(h pageHeader) error {
	if h.numValues < 0 {
		return corruptf("column %s: dictionary page declares %d values", p.column, h.numValues)
	}
	bits := int64(8) * minPlainBytes(p.phys, p.typeLen)
	if p.phys == parquet.Types.Boolean {
		bits = 1
	}
	if int64(h.numValues)*bits > int64(h.uncompressed)*8 {
		return corruptf("column %s: dictionary page declares %d values in %d bytes", p.column, h.numValues, h.uncompressed)
	}
	return nil
}

// minPlainBytes is the smallest PLAIN encoding of one value of phys.
func minPlainBytes(phys parquet.Type, typeLen int) int64 {
	switch phys {
	case parquet.Types.Int32, parquet.Types.Float, parquet.Types.ByteArray:
		return 4
	case parquet.Types.Int64, parquet.Types.Double:
		return 8
	case parquet.Types.Int96:
		return 12
	case parquet.Types.FixedLenByteArray:
		return max(int64(typeLen), 1)
	}
	return 1
}

// header reads the page header at pos, growing its buffer until the header
// fits (up to maxPageHeaderBytes or the end of the data), and returns it
// with its encoded length.
func (p *pageScan) header(pos int64) (pageHeader, int64, error) {
	want := 256
	for {
		n := int(min(int64(want), p.dataEnd-pos))
		if n <= 0 {
			return pageHeader{}, 0, corruptf("column %s: page header at %d lies past the data", p.column, pos)
		}
		if cap(p.buf) < n {
			p.buf = make([]byte, n)
		}
		buf := p.buf[:n]
		if err := readAt(p.src, buf, pos, p.size); err != nil {
			return pageHeader{}, 0, err
		}
		h, hlen, err := parsePageHeader(buf)
		if err == nil {
			return h, int64(hlen), nil
		}
		if !errors.Is(err, errShort) || n < want || want >= maxPageHeaderBytes {
			return pageHeader{}, 0, corruptf("column %s: page header at %d: %v", p.column, pos, err)
		}
		want *= 4
	}
}

// parsePageHeader decodes the fields of a PageHeader the scan needs.
func parsePageHeader(buf []byte) (pageHeader, int, error) {
	var h pageHeader
	var nv [9]int32 // num_values by the field id of its header struct
	t := &thriftReader{buf: buf}
	err := t.readStruct(0, func(id int16, typ byte) (bool, error) {
		var err error
		switch {
		case id == 1 && typ == tI32:
			h.typ, err = t.i32()
			h.hasType = true
		case id == 2 && typ == tI32:
			h.uncompressed, err = t.i32()
			h.hasSizes++
		case id == 3 && typ == tI32:
			h.compressed, err = t.i32()
			h.hasSizes++
		case (id == 5 || id == 7 || id == 8) && typ == tStruct:
			// data_page_header, dictionary_page_header, data_page_header_v2:
			// field 1 is num_values in all three.
			field := id
			err = t.readStruct(1, func(id int16, typ byte) (bool, error) {
				if id != 1 || typ != tI32 {
					return false, nil
				}
				var err error
				nv[field], err = t.i32()
				return true, err
			})
		default:
			return false, nil
		}
		return true, err
	})
	switch h.typ {
	case pageData:
		h.numValues = nv[5]
	case pageDictionary:
		h.numValues = nv[7]
	case pageDataV2:
		h.numValues = nv[8]
	}
	return h, t.pos, err
}
