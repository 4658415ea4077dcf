// The file envelope: magic bytes, footer length and the footer itself, read
// and vetted before arrow-go parses the metadata.

package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Footer bounds. A footer of MaxFooterBytes describes thousands of row
// groups; a larger one, or one whose decoded form would exceed
// maxFooterCost, is refused as corrupt before it is parsed.
const (
	MaxFooterBytes = 16 << 20
	maxFooterCost  = 256 << 20
)

var (
	magic          = []byte("PAR1")
	magicEncrypted = []byte("PARE")
)

// envelopeSize is the smallest possible file: leading magic, footer length
// and trailing magic.
const envelopeSize = 12

// readAt fills p from r at off, or fails with a corruption error saying
// the file is shorter than its declared size.
func readAt(r io.ReaderAt, p []byte, off, size int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf("file is shorter than its declared %d bytes", size)
	}
	return fmt.Errorf("parquet: read %d bytes at %d: %w", len(p), off, err)
}

// readFooter checks the envelope of the size-byte file in r and returns the
// parsed metadata and the offset where the footer starts (the end of the
// data region).
func readFooter(r io.ReaderAt, size int64, lim spool.Limits) (*metadata.FileMetaData, int64, error) {
	if size < envelopeSize {
		return nil, 0, corruptf("file of %d bytes is too small to be parquet", size)
	}
	if lim.MaxBytes > 0 && size > lim.MaxBytes {
		return nil, 0, fmt.Errorf("%w: file of %d bytes exceeds the limit of %d", spool.ErrTooLarge, size, lim.MaxBytes)
	}
	var head [4]byte
	var tail [8]byte
	if err := readAt(r, tail[:], size-8, size); err != nil {
		return nil, 0, err
	}
	if err := readAt(r, head[:], 0, size); err != nil {
		return nil, 0, err
	}
	if bytes.Equal(tail[4:], magicEncrypted) || bytes.Equal(head[:], magicEncrypted) {
		return nil, 0, recordstore.Errorf(ErrUnsupported, "encrypted footer")
	}
	if !bytes.Equal(tail[4:], magic) || !bytes.Equal(head[:], magic) {
		return nil, 0, corruptf("magic bytes PAR1 not found at both ends")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-envelopeSize {
		return nil, 0, corruptf("footer length %d does not fit a file of %d bytes", n, size)
	}
	if n > MaxFooterBytes {
		return nil, 0, corruptf("footer of %d bytes is larger than the %d allowed", n, MaxFooterBytes)
	}
	start := size - 8 - n
	buf := make([]byte, n)
	if err := readAt(r, buf, start, size); err != nil {
		return nil, 0, err
	}
	if err := vetMessage(buf, maxFooterCost); err != nil {
		return nil, 0, corruptf("footer: %v", err)
	}
	meta, err := parseMetadata(buf)
	if err != nil {
		return nil, 0, err
	}
	meta.SetSourceFileSize(size)
	return meta, start, nil
}

// parseMetadata lets arrow-go decode a vetted footer, turning its panics
// (it panics on some malformed logical types) into corruption errors.
func parseMetadata(buf []byte) (meta *metadata.FileMetaData, err error) {
	defer recoverCorrupt(&err, "parse footer")
	meta, err = metadata.NewFileMetaData(buf, nil)
	if err != nil {
		return nil, corruptf("parse footer: %v", err)
	}
	return meta, nil
}
