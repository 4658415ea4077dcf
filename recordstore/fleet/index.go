// The identity index: List and ListPage remember, in one file at the root,
// the identity each store file recorded when they last read it, keyed by
// the file's stat, so that a list of a fleet whose files did not change
// opens none of them.
//
// File format (IndexName, 0600, replaced whole through fsutil):
//
//	"fleetidx" (8 bytes) | version 1 (1 byte) | uvarint count
//	count × entry:
//	  uvarint len | path (relative to the root, '/' separators)
//	  uvarint len | identity (the key the file records; "" for none)
//	  uvarint dev | uvarint inode | varint size | varint mtime ns | varint ctime ns
//	CRC-32C of all the bytes above (4 bytes, little endian)
//
// Trust: an entry stands for the file at its path only while the file's
// device, inode, size, mtime and ctime are all what they were when its
// identity was read. A file renamed or linked over the path has another
// inode; one copied over it or written in place has a new ctime, which no
// process can set back (touch sets mtime, never ctime). The index is only
// ever read by List and ListPage, which change nothing: every open, write,
// delete, backup and import reads the file itself, never the index. A
// missing, unreadable or corrupt index is a cache miss for every file
// (a corrupt one is logged) and is rewritten by the next list.

package fleet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// IndexName is the identity index's file name, at the fleet's root. Its
// leading dot keeps it out of List (never a store, never a stray).
const IndexName = ".fleet-index"

// indexMagic opens an index file; indexVersion follows it.
const (
	indexMagic   = "fleetidx"
	indexVersion = 1
)

// Limits of the decoder: an index past them is corrupt.
const (
	maxIndexBytes   = 256 << 20 // the file
	maxIndexEntries = 1 << 22   // entries
	maxIndexPath    = 4096      // bytes of a path
	maxIndexKey     = 1024      // bytes of an identity
)

// errCorruptIndex is wrapped by every decode failure of an index file.
var errCorruptIndex = errors.New("corrupt fleet index")

// crcTable is CRC-32C's.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// indexEntry is what the index knows of the file at one path: its stamp
// when its identity was read, and that identity.
type indexEntry struct {
	st  stamp
	key string
}

// encodeIndex returns the index file of entries (by path), sorted by path.
func encodeIndex(entries map[string]indexEntry) []byte {
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b := make([]byte, 0, 16+len(paths)*64)
	b = append(b, indexMagic...)
	b = append(b, indexVersion)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		e := entries[p]
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
		b = binary.AppendUvarint(b, uint64(len(e.key)))
		b = append(b, e.key...)
		b = binary.AppendUvarint(b, e.st.dev)
		b = binary.AppendUvarint(b, e.st.ino)
		b = binary.AppendVarint(b, e.st.size)
		b = binary.AppendVarint(b, e.st.mtime)
		b = binary.AppendVarint(b, e.st.ctime)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// indexReader reads the fields of an index file, remembering the first
// failure.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{errCorruptIndex}, args...)...)
	}
}

func (r *indexReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) bytes(what string, max int) string {
	n := r.uvarint(what + " length")
	if r.err != nil {
		return ""
	}
	if n > uint64(max) || n > uint64(len(r.b)) {
		r.fail("%s of %d bytes", what, n)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeIndex decodes an index file. Any damage — a short or long file, a
// bad checksum, an unknown version, a field past its limit, a path given
// twice — is an error wrapping errCorruptIndex.
func decodeIndex(data []byte) (map[string]indexEntry, error) {
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("%w: %d bytes", errCorruptIndex, len(data))
	}
	head := len(indexMagic) + 1
	if len(data) < head+4 || !bytes.Equal(data[:len(indexMagic)], []byte(indexMagic)) {
		return nil, fmt.Errorf("%w: not an index file", errCorruptIndex)
	}
	if v := data[len(indexMagic)]; v != indexVersion {
		return nil, fmt.Errorf("%w: version %d", errCorruptIndex, v)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorruptIndex)
	}
	r := &indexReader{b: body[head:]}
	n := r.uvarint("entry count")
	if r.err == nil && (n > maxIndexEntries || n > uint64(len(r.b))) {
		r.fail("%d entries", n)
	}
	entries := make(map[string]indexEntry, min(n, 1<<16))
	for i := uint64(0); i < n && r.err == nil; i++ {
		p := r.bytes("path", maxIndexPath)
		var e indexEntry
		e.key = r.bytes("identity", maxIndexKey)
		e.st.dev = r.uvarint("device")
		e.st.ino = r.uvarint("inode")
		e.st.size = r.varint("size")
		e.st.mtime = r.varint("mtime")
		e.st.ctime = r.varint("ctime")
		if _, dup := entries[p]; dup && r.err == nil {
			r.fail("path %q twice", cut(p))
		}
		entries[p] = e
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the entries", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return entries, nil
}

// indexRun is the index as one List or ListPage uses it: the entries read
// from the file, the paths the walk found, and the identities read now.
type indexRun struct {
	path  string
	old   map[string]indexEntry
	found map[string]bool
	fresh map[string]indexEntry
}

// loadIndex reads the fleet's index file. A missing file is an empty
// index; an unreadable or corrupt one is logged and taken as empty (the
// run's save replaces it).
func (f *Fleet) loadIndex() *indexRun {
	ix := &indexRun{path: filepath.Join(f.root, IndexName), old: map[string]indexEntry{}, found: map[string]bool{}, fresh: map[string]indexEntry{}}
	data, err := readIndexFile(ix.path)
	if errors.Is(err, fs.ErrNotExist) {
		return ix
	}
	if err == nil {
		var old map[string]indexEntry
		if old, err = decodeIndex(data); err == nil {
			ix.old = old
			return ix
		}
	}
	f.log.Warn("fleet index ignored: every store's identity is read again", "path", ix.path, "err", err)
	return ix
}

// readIndexFile reads the index file at p, refusing more than
// maxIndexBytes and anything that is not a regular file (never following
// a symlink).
func readIndexFile(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", errCorruptIndex, p)
	}
	if fi.Size() > maxIndexBytes {
		return nil, fmt.Errorf("%w: %d bytes", errCorruptIndex, fi.Size())
	}
	return os.ReadFile(p)
}

// saw records that the walk found a store file at rel.
func (ix *indexRun) saw(rel string) {
	if ix != nil {
		ix.found[rel] = true
	}
}

// lookup returns the identity the index holds for the file at rel whose
// stamp is now st, when the file is unchanged since it was read.
func (ix *indexRun) lookup(rel string, st stamp) (string, bool) {
	if ix == nil {
		return "", false
	}
	e, ok := ix.old[rel]
	if !ok || e.st != st {
		return "", false
	}
	return e.key, true
}

// put records the identity just read from the file at rel, whose stamp
// was st both before and after the read.
func (ix *indexRun) put(rel string, st stamp, key string) {
	if ix != nil {
		ix.fresh[rel] = indexEntry{st: st, key: key}
	}
}

// save writes the index for the next run when it changed: the entries of
// the files the walk found, the identities read now replacing the old.
// Entries of paths the walk did not find are dropped. A failed write (a
// root the process may not write, a full disk) is logged and leaves the
// old index (or none) in place: fsutil removes its temporary file, whose
// name starts with a dot, so no list takes it for a store or a stray.
func (f *Fleet) saveIndex(ctx context.Context, ix *indexRun) {
	if ix == nil || ctx.Err() != nil {
		return
	}
	kept := 0 // old entries of paths the walk found
	for rel := range ix.found {
		if _, ok := ix.old[rel]; ok {
			kept++
		}
	}
	if len(ix.fresh) == 0 && kept == len(ix.old) {
		return // nothing read, nothing gone
	}
	next := make(map[string]indexEntry, len(ix.found))
	for rel := range ix.found {
		if e, ok := ix.fresh[rel]; ok {
			next[rel] = e
		} else if e, ok := ix.old[rel]; ok {
			next[rel] = e
		}
	}
	if err := fsutil.WriteFile(ix.path, encodeIndex(next), 0o600); err != nil {
		f.log.Info("fleet index not written: the next list reads the identities again", "path", ix.path, "err", err)
	}
}
