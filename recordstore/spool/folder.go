// Loading a committed batch: the manifest and file checks, and streaming
// its rows under the row and byte caps.

package spool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
)

// Folder is a loaded batch folder: its manifest has been decoded and validated,
// its name matches the manifest, and every data file is a plain file of
// the declared size. Checksums and rows are checked as entries are read.
// A Folder is not safe for concurrent use. It is the folder on disk, not
// the recordstore.Batch an owner makes of it to apply it (see the
// glossary in docs/concepts.md).
type Folder struct {
	// Name is the parsed folder name.
	Name BatchName
	// Path is the batch folder.
	Path string
	// Manifest is the decoded manifest.
	Manifest *Manifest
	// Retried says the folder holds a retry mark (RetryFile): the batch
	// failed before and was put back by Dir.Retry.
	Retried bool

	limits Limits
}

// Load loads batch name of folder s (incoming or failed). Every error is a
// *ValidationError naming the batch, wrapping ErrBadBatchName,
// ErrManifestFormat, ErrBadManifest, ErrUnsafePath, ErrChecksum,
// ErrUnknownCodec or ErrTooManyRows — or an I/O error (which wraps no
// recordstore sentinel) when the folder could not be read. Load changes
// nothing on disk.
func (d *Dir) Load(ctx context.Context, s State, name string) (*Folder, error) {
	if err := checkEntryName(name); err != nil {
		return nil, &ValidationError{Batch: name, Reason: err}
	}
	return LoadPath(ctx, d.Path(s, name), d.limits)
}

// LoadPath loads the batch folder at path (see Dir.Load), holding it to
// lim (0 = unlimited).
func LoadPath(ctx context.Context, path string, lim Limits) (*Folder, error) {
	base := filepath.Base(path)
	b, err := loadPath(ctx, path, base, lim)
	if err != nil {
		return nil, &ValidationError{Batch: base, Reason: err}
	}
	return b, nil
}

func loadPath(ctx context.Context, path, base string, lim Limits) (*Folder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, err := ParseBatchName(base)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("stat batch: %w", err)
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, recordstore.Errorf(ErrUnsafePath, "batch %s is a symlink, refused: a batch must be a folder of the spool itself", base)
	} else if !fi.IsDir() {
		return nil, recordstore.Errorf(ErrUnsafePath, "batch %s is not a folder (%s)", base, fi.Mode().Type())
	}
	m, err := readManifest(filepath.Join(path, ManifestFile))
	if err != nil {
		return nil, err
	}
	if m.Name().String() != base {
		return nil, recordstore.Errorf(ErrBadManifest, "folder name %s does not match the manifest (%s)", base, m.Name())
	}
	b := &Folder{Name: name, Path: path, Manifest: m, limits: lim}
	if err := b.checkFiles(); err != nil {
		return nil, err
	}
	if b.Retried, err = retryMarked(path); err != nil {
		return nil, err
	}
	return b, nil
}

// readManifest reads and decodes a manifest file, never reading more than
// MaxManifestBytes+1 bytes.
func readManifest(path string) (*Manifest, error) {
	f, err := openPlain(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return DecodeManifest(data)
}

// openPlain opens path for reading, refusing (ErrUnsafePath) a symlink or
// anything but a plain file. A missing file is ErrBadManifest-worthy for
// the caller and reported as ErrUnsafePath with the cause.
func openPlain(path string) (*os.File, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, recordstore.Errorf(ErrUnsafePath, "%s is a symlink", filepath.Base(path))
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, recordstore.Errorf(ErrBadManifest, "%s is missing", filepath.Base(path))
		}
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", filepath.Base(path), err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, recordstore.Errorf(ErrUnsafePath, "%s is not a plain file (%s)", filepath.Base(path), fi.Mode().Type())
	}
	return f, nil
}

// checkFiles checks the row total and that every data file is a plain file
// of the declared size, without reading them.
func (b *Folder) checkFiles() error {
	var rows int64
	for i, e := range b.Manifest.Entries {
		rows += e.Rows
		if b.limits.MaxRows > 0 && rows > b.limits.MaxRows {
			return recordstore.Errorf(ErrTooManyRows, "the batch declares more than %d rows", b.limits.MaxRows)
		}
		if e.File == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(b.Path, e.File))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("entry %d: %w: data file %s is missing", i, ErrChecksum, e.File)
			}
			return fmt.Errorf("entry %d: stat %s: %w", i, e.File, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("entry %d: %w: data file %s is not a plain file (%s)", i, ErrUnsafePath, e.File, fi.Mode().Type())
		}
		if fi.Size() != e.Bytes {
			return fmt.Errorf("entry %d: %w: data file %s has %d bytes, the manifest says %d", i, ErrChecksum, e.File, fi.Size(), e.Bytes)
		}
	}
	return nil
}

// Kind returns the manifest schema of entry i (nil for entries that carry
// no rows).
func (b *Folder) Kind(i int) *recordstore.Kind {
	return b.Manifest.Schema(b.Manifest.Entries[i].Kind)
}

// Verify reads every data file once and checks its size and SHA-256.
// Errors are *ValidationError wrapping ErrChecksum or ErrUnsafePath, or I/O
// errors.
func (b *Folder) Verify(ctx context.Context) error {
	for i, e := range b.Manifest.Entries {
		if e.File == "" {
			continue
		}
		f, err := b.openVerified(ctx, i)
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

// openVerified opens the data file of entry i and checks its size and
// SHA-256 by reading it once.
func (b *Folder) openVerified(ctx context.Context, i int) (*os.File, error) {
	e := b.Manifest.Entries[i]
	f, err := openPlain(filepath.Join(b.Path, e.File))
	if err != nil {
		return nil, b.invalid(i, err)
	}
	if err := checkSum(ctx, f, e); err != nil {
		f.Close()
		return nil, b.invalid(i, err)
	}
	return f, nil
}

func checkSum(ctx context.Context, f *os.File, e Entry) error {
	h := sha256.New()
	// Read in one piece up to 1 MiB (+1 byte to see EOF or an overlong
	// file at once); most spooled files are small.
	buf := make([]byte, min(max(e.Bytes, 0)+1, 1<<20))
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := f.ReadAt(buf, n)
		h.Write(buf[:k])
		n += int64(k)
		if n > e.Bytes {
			return recordstore.Errorf(ErrChecksum, "data file %s is larger than %d bytes", e.File, e.Bytes)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", e.File, err)
		}
	}
	if n != e.Bytes {
		return recordstore.Errorf(ErrChecksum, "data file %s has %d bytes, the manifest says %d", e.File, n, e.Bytes)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != e.SHA256 {
		return recordstore.Errorf(ErrChecksum, "data file %s has SHA-256 %s, the manifest says %s", e.File, sum, e.SHA256)
	}
	return nil
}

func (b *Folder) invalid(i int, err error) error {
	return &ValidationError{Batch: b.Name.String(), Reason: fmt.Errorf("entry %d: %w", i, err)}
}

// Open returns a reader of the rows of append entry i. It first checks the
// file's size and SHA-256 (reading it once), then decodes it as a stream:
// rows are checked against the entry's schema, the row count against the
// manifest (ErrRowCount as soon as one row too many is read, or at the end)
// and the batch limits while reading. An entry without a file reads as
// zero rows. Errors are *ValidationError.
func (b *Folder) Open(ctx context.Context, i int) (*EntryReader, error) {
	if i < 0 || i >= len(b.Manifest.Entries) {
		return nil, recordstore.Invalidf("spool: batch %s has no entry %d", b.Name, i)
	}
	e := b.Manifest.Entries[i]
	r := &EntryReader{batch: b, index: i, entry: e, ctx: ctx}
	if e.Op != recordstore.OpAppend || e.File == "" {
		return r, nil
	}
	codec, err := Lookup(e.Format)
	if err != nil {
		return nil, b.invalid(i, err)
	}
	f, err := b.openVerified(ctx, i)
	if err != nil {
		return nil, err
	}
	lim := b.limits
	lim.MaxRows = e.Rows // checkFiles saw e.Rows within the batch cap; a row more is a mismatch
	dec, err := codec.NewDecoder(f, e.Bytes, b.Kind(i), lim)
	if err != nil {
		f.Close()
		return nil, b.invalid(i, err)
	}
	r.file, r.dec = f, dec
	return r, nil
}

// Rows returns the rows of entry i as an iterator; iteration stops after
// the first error, which is yielded with a nil row.
func (b *Folder) Rows(ctx context.Context, i int) iter.Seq2[recordstore.Values, error] {
	return func(yield func(recordstore.Values, error) bool) {
		r, err := b.Open(ctx, i)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.Close()
		for {
			v, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Batch returns the batch the folder holds, without rows: its header and
// schemas are the manifest's (shared with it), its entries the manifest's
// (Entry.BatchEntry). The caller reads the rows of each append entry with
// Open, or all of them with ReadAll.
func (b *Folder) Batch() *recordstore.Batch {
	m := b.Manifest
	batch := &recordstore.Batch{ID: m.ID, Producer: m.Producer, Created: m.Created, Schemas: m.Schemas,
		Entries: make([]recordstore.BatchEntry, len(m.Entries))}
	for i := range m.Entries {
		batch.Entries[i] = m.Entries[i].BatchEntry()
	}
	return batch
}

// ReadAll reads and checks every entry and returns the batch in memory,
// every append entry's rows in Rows. Nothing is returned unless the whole
// batch is valid.
func (b *Folder) ReadAll(ctx context.Context) (*recordstore.Batch, error) {
	batch := b.Batch()
	for i := range batch.Entries {
		if batch.Entries[i].Op != recordstore.OpAppend {
			continue
		}
		r, err := b.Open(ctx, i)
		if err != nil {
			return nil, err
		}
		if batch.Entries[i].Rows, err = r.ReadAll(); err != nil {
			return nil, err
		}
	}
	return batch, nil
}

// EntryReader streams the rows of one entry (see Folder.Open).
type EntryReader struct {
	batch *Folder
	index int
	entry Entry
	ctx   context.Context
	file  *os.File
	dec   Decoder
	rows  int64
	done  bool
}

// Entry returns the manifest entry being read.
func (r *EntryReader) Entry() Entry { return r.entry }

// Next returns the next row, io.EOF after the last one, or a
// *ValidationError (a row that does not fit the schema: ErrInvalid; a row
// count that differs from the manifest: ErrRowCount; a limit: ErrTooLarge,
// ErrTooManyRows).
func (r *EntryReader) Next() (recordstore.Values, error) {
	if r.dec == nil || r.done {
		return nil, io.EOF
	}
	if r.rows%1024 == 0 {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
	}
	v, err := r.dec.Next()
	switch {
	case err == io.EOF:
		r.done = true
		if r.rows != r.entry.Rows {
			return nil, r.batch.invalid(r.index, recordstore.Errorf(ErrRowCount, "data file %s holds %d rows, the manifest says %d", r.entry.File, r.rows, r.entry.Rows))
		}
		return nil, io.EOF
	case errors.Is(err, ErrTooManyRows):
		r.done = true
		return nil, r.tooMany()
	case err != nil:
		r.done = true
		return nil, r.batch.invalid(r.index, err)
	}
	if r.rows == r.entry.Rows {
		r.done = true
		return nil, r.tooMany()
	}
	r.rows++
	return v, nil
}

func (r *EntryReader) tooMany() error {
	return r.batch.invalid(r.index, recordstore.Errorf(ErrRowCount, "data file %s holds more than the %d rows the manifest says", r.entry.File, r.entry.Rows))
}

// ReadAll reads every remaining row (the manifest's count sized the
// slice) and closes the reader, whatever happens.
func (r *EntryReader) ReadAll() ([]recordstore.Values, error) {
	defer r.Close()
	vals := make([]recordstore.Values, 0, r.entry.Rows-r.rows)
	for {
		v, err := r.Next()
		if err == io.EOF {
			return vals, nil
		}
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
}

// Close releases the data file.
func (r *EntryReader) Close() error {
	if r.dec == nil {
		return nil
	}
	err := r.dec.Close()
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	r.dec = nil
	return err
}
