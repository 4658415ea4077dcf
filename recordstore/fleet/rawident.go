// Reading a store's identity row straight from the file's pages, without
// opening SQLite: a list that finds a file its identity index does not
// know (a root's first list) reads a few pages instead of paying for a
// SQLite connection (open, WAL and -shm set up and torn down, close).
//
// Only what the identity needs of SQLite's file format
// (sqlite.org/fileformat.html) is read: the 100-byte header, the table
// b-tree of sqlite_schema from page 1 to find the root page of
// IdentityTable, and that table's first row; cells that overflow onto
// other pages are followed. Anything else — a -wal or -journal beside the
// file (its newest pages may be there), text not in UTF-8, a page that is
// not a table b-tree page, a pointer out of range, a loop — makes the
// reader give up, and the caller asks SQLite instead.

package fleet

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// rawLimits bound the reader on a damaged or hostile file.
const (
	rawMaxPages   = 4096    // b-tree and overflow pages read for one identity
	rawMaxPayload = 1 << 20 // bytes of one cell's payload
)

// errRaw says the reader cannot tell: the caller asks SQLite.
var errRaw = errors.New("identity not readable from the file's pages")

// rawIdentity returns the key the store file at path records in
// IdentityTable, read from its pages; ok is false when it cannot tell for
// sure (see the file's comment), and then nothing may be concluded. id is
// "" with ok when the file has no identity table or no row in it.
func rawIdentity(path string) (id string, ok bool) {
	if !settled(path) {
		return "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false
	}
	id, err = parseIdentity(f, fi.Size())
	return id, err == nil
}

// settled reports whether the SQLite file at path holds all of its pages:
// no non-empty -wal (a process has it open, or died with pages not yet
// checkpointed) or -journal (a hot rollback journal) beside it.
func settled(path string) bool {
	for _, side := range []string{"-wal", "-journal"} {
		fi, err := os.Stat(path + side)
		if err == nil && fi.Size() > 0 || err != nil && !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}

// pageReader reads the pages of one SQLite file.
type pageReader struct {
	r      io.ReaderAt
	size   int   // page size in bytes
	usable int   // page size less the reserved bytes at each page's end
	pages  int64 // pages in the file
	reads  int   // pages read so far (bounded by rawMaxPages)
}

// parseIdentity reads the identity key of the SQLite file in r, size bytes
// long (see rawIdentity); errRaw when it cannot tell.
func parseIdentity(r io.ReaderAt, size int64) (string, error) {
	p, err := newPageReader(r, size)
	if err != nil {
		return "", err
	}
	root := int64(0)
	err = p.walk(1, func(rec []any) bool {
		if len(rec) >= 4 && rec[0] == "table" && rec[1] == IdentityTable {
			if n, ok := rec[3].(int64); ok {
				root = n
			}
			return false
		}
		return true
	})
	if err != nil {
		return "", err
	}
	if root == 0 {
		return "", nil
	}
	if root < 2 {
		return "", errRaw
	}
	id := ""
	err = p.walk(root, func(rec []any) bool {
		if len(rec) >= 1 {
			id, _ = rec[0].(string)
		}
		return false
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// newPageReader checks the file header: the magic text, a page size SQLite
// allows, UTF-8 text, and a page count that the file's size holds.
func newPageReader(r io.ReaderAt, size int64) (*pageReader, error) {
	var h [100]byte
	if size < int64(len(h)) {
		return nil, errRaw
	}
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, errRaw
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return nil, errRaw
	}
	ps := int(binary.BigEndian.Uint16(h[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return nil, errRaw
	}
	usable := ps - int(h[20])
	if usable < 480 {
		return nil, errRaw
	}
	if binary.BigEndian.Uint32(h[56:60]) != 1 { // text encoding: UTF-8 only
		return nil, errRaw
	}
	return &pageReader{r: r, size: ps, usable: usable, pages: size / int64(ps)}, nil
}

// page reads page n (1-based).
func (p *pageReader) page(n int64) ([]byte, error) {
	if n < 1 || n > p.pages || p.reads >= rawMaxPages {
		return nil, errRaw
	}
	p.reads++
	b := make([]byte, p.size)
	if _, err := p.r.ReadAt(b, (n-1)*int64(p.size)); err != nil {
		return nil, errRaw
	}
	return b, nil
}

// walk calls fn with the decoded record of each row of the table b-tree
// rooted at page root, in rowid order, until fn returns false. A page
// seen twice (a loop) or of another kind than a table b-tree page is
// errRaw.
func (p *pageReader) walk(root int64, fn func(rec []any) bool) error {
	seen := map[int64]bool{}
	_, err := p.walkPage(root, seen, fn)
	return err
}

// walkPage walks the subtree at page n; more is false once fn said stop.
func (p *pageReader) walkPage(n int64, seen map[int64]bool, fn func(rec []any) bool) (more bool, err error) {
	if seen[n] {
		return false, errRaw
	}
	seen[n] = true
	b, err := p.page(n)
	if err != nil {
		return false, err
	}
	hdr := 0
	if n == 1 {
		hdr = 100 // page 1 holds the file header first
	}
	if hdr+8 > len(b) {
		return false, errRaw
	}
	kind := b[hdr]
	cells := int(binary.BigEndian.Uint16(b[hdr+3:]))
	ptrs := hdr + 8
	if kind == 0x05 {
		ptrs = hdr + 12
	}
	if ptrs+2*cells > p.usable {
		return false, errRaw
	}
	switch kind {
	case 0x0d: // table leaf
		for i := 0; i < cells; i++ {
			off := int(binary.BigEndian.Uint16(b[ptrs+2*i:]))
			payload, err := p.leafPayload(b, off)
			if err != nil {
				return false, err
			}
			rec, err := decodeRecord(payload)
			if err != nil {
				return false, err
			}
			if !fn(rec) {
				return false, nil
			}
		}
		return true, nil
	case 0x05: // table interior: each cell's left child, then the right-most child
		for i := 0; i <= cells; i++ {
			var child int64
			if i < cells {
				off := int(binary.BigEndian.Uint16(b[ptrs+2*i:]))
				if off < ptrs || off+4 > p.usable {
					return false, errRaw
				}
				child = int64(binary.BigEndian.Uint32(b[off:]))
			} else {
				child = int64(binary.BigEndian.Uint32(b[hdr+8:]))
			}
			more, err := p.walkPage(child, seen, fn)
			if err != nil || !more {
				return more, err
			}
		}
		return true, nil
	}
	return false, errRaw
}

// leafPayload returns the whole payload of the table leaf cell at off of
// page b, following its overflow pages.
func (p *pageReader) leafPayload(b []byte, off int) ([]byte, error) {
	if off < 8 || off >= p.usable {
		return nil, errRaw
	}
	size, n := uvarint(b[off:p.usable])
	if n == 0 || size > rawMaxPayload {
		return nil, errRaw
	}
	off += n
	if _, n = uvarint(b[off:p.usable]); n == 0 { // the rowid
		return nil, errRaw
	}
	off += n
	total := int(size)
	local := p.localSize(total)
	if off+local > p.usable {
		return nil, errRaw
	}
	out := make([]byte, 0, total)
	out = append(out, b[off:off+local]...)
	if local == total {
		return out, nil
	}
	if off+local+4 > p.usable {
		return nil, errRaw
	}
	next := int64(binary.BigEndian.Uint32(b[off+local:]))
	seen := map[int64]bool{}
	for len(out) < total {
		if next == 0 || seen[next] {
			return nil, errRaw
		}
		seen[next] = true
		ov, err := p.page(next)
		if err != nil {
			return nil, err
		}
		next = int64(binary.BigEndian.Uint32(ov))
		take := min(total-len(out), p.usable-4)
		out = append(out, ov[4:4+take]...)
	}
	return out, nil
}

// localSize is how many bytes of a table leaf cell's payload of total
// bytes are on the cell's own page (fileformat.html, "Cell Payload
// Overflow Pages").
func (p *pageReader) localSize(total int) int {
	u := p.usable
	x := u - 35
	if total <= x {
		return total
	}
	m := (u-12)*32/255 - 23
	k := m + (total-m)%(u-4)
	if k <= x {
		return k
	}
	return m
}

// decodeRecord decodes a record (fileformat.html, "Record Format") into
// nil, int64, float64 (its bits only: never compared), string (TEXT) or
// []byte (BLOB) values.
func decodeRecord(b []byte) ([]any, error) {
	hsize, n := uvarint(b)
	if n == 0 || hsize < uint64(n) || hsize > uint64(len(b)) {
		return nil, errRaw
	}
	var rec []any
	body := int(hsize)
	for pos := n; pos < int(hsize); {
		st, m := uvarint(b[pos:hsize])
		if m == 0 {
			return nil, errRaw
		}
		pos += m
		v, size, err := recordValue(st, b[body:])
		if err != nil {
			return nil, err
		}
		rec = append(rec, v)
		body += size
	}
	return rec, nil
}

// recordValue decodes one value of serial type st from the front of b and
// returns it with its size.
func recordValue(st uint64, b []byte) (any, int, error) {
	switch {
	case st == 0:
		return nil, 0, nil
	case st <= 6:
		size := [...]int{0, 1, 2, 3, 4, 6, 8}[st]
		if len(b) < size {
			return nil, 0, errRaw
		}
		v := int64(int8(b[0])) // sign from the first byte
		for _, c := range b[1:size] {
			v = v<<8 | int64(c)
		}
		return v, size, nil
	case st == 7:
		if len(b) < 8 {
			return nil, 0, errRaw
		}
		return float64(0), 8, nil
	case st == 8:
		return int64(0), 0, nil
	case st == 9:
		return int64(1), 0, nil
	case st >= 12:
		size := (st - 12) / 2
		if size > uint64(len(b)) {
			return nil, 0, errRaw
		}
		if st%2 == 1 {
			return string(b[:size]), int(size), nil
		}
		return b[:size:size], int(size), nil
	}
	return nil, 0, errRaw // 10 and 11 are reserved
}

// uvarint decodes SQLite's big-endian varint (1 to 9 bytes, the ninth
// giving all its 8 bits) at the front of b; n is 0 when b ends first.
func uvarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
