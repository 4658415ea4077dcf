// Publish: write a batch under tmp/, make it durable, and commit it with
// one rename into incoming/.

package spool

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// The publish steps a Failpoint hook is called with, in order.
const (
	StepTmpCreated      = "publish:tmp-created"      // tmp/<instance>-<id>/ exists
	StepDataWritten     = "publish:data-written"     // every data file written, not yet fsynced (the manifest is next)
	StepManifestWritten = "publish:manifest-written" // manifest.json written too, nothing fsynced yet
	StepTmpSynced       = "publish:tmp-synced"       // the files and the batch folder fsynced together (the folder by the preparation, for a prepared folder whose files are exactly the batch's)
	StepCommitted       = "publish:committed"        // renamed into incoming/, incoming fsynced
)

// PublishSteps lists the steps in order.
var PublishSteps = []string{StepTmpCreated, StepDataWritten, StepManifestWritten, StepTmpSynced, StepCommitted}

// Publish writes batch as a batch folder encoded with the codec named
// format and commits it: the data files and manifest.json are written into
// tmp/<instance>-<id>/ and fsynced, the folder is fsynced, then renamed to
// incoming/<name> (the single commit point) and incoming is fsynced.
//
// A batch an owner would refuse to load is refused here: a row with a null
// required or key column, two rows of one entry with the same key, a row
// with another number of values than its kind has columns, a non-append
// entry with rows, an entry with both Rows and a Source (ErrInvalid, before
// anything is written), more rows than the Dir's Limits.MaxRows
// (ErrTooManyRows, before anything is written), or an entry whose rows,
// written as NDJSON, exceed Limits.MaxBytes (ErrTooLarge). With the NDJSON codecs the NDJSON bytes are counted as
// they are encoded, exactly; with the others the size is estimated from
// the values before anything is written, counting every number at its
// widest, so an entry close to the limit may be refused: split it, as
// Writer does at 64 MiB.
//
// An append entry may stream its rows from a Source instead of holding
// them in Rows: its data file is then written as the rows are read, a
// chunk at a time, its size, checksum and row count taken as they go, so
// that the publish holds a few thousand of its rows at a time whatever
// their number (a keyed kind's keys excepted). Its rows are checked as
// they are read, with the same errors as held rows, and a Source that
// fails, or yields another number of rows than its Len, fails the publish
// with that error (wrapped) once part of the data is written: the tmp
// folder is then removed, and nothing is in incoming. The Source is read
// once, to its end (not closed); Publish cannot be called again with it.
//
// On error nothing is in incoming and the tmp folder has been removed,
// with one exception: an fsync error (recordstore.ErrFsync) of the final rename
// means the batch may or may not be in incoming; the caller must treat
// it as fatal for the writer. Publishing the same batch again (same id)
// first removes a tmp folder left by an earlier attempt.
func (d *Dir) Publish(ctx context.Context, batch *recordstore.Batch, format string) (BatchName, error) {
	return d.PublishNotify(ctx, batch, format, nil)
}

// PublishNotify is Publish that calls visible (when not nil) with the
// batch's name as soon as the batch is in incoming/, while the folder
// fsyncs that make the rename durable still run. A producer uses it to ask
// the owner for the batch's outcome in parallel with those fsyncs; it must
// still treat the batch as published only when PublishNotify returns nil.
// visible runs on the caller's goroutine while those fsyncs run on
// another, and PublishNotify returns once both are done.
func (d *Dir) PublishNotify(ctx context.Context, batch *recordstore.Batch, format string, visible func(BatchName)) (BatchName, error) {
	codec, err := Lookup(format)
	if err != nil {
		return BatchName{}, err
	}
	m, err := buildManifest(batch)
	if err != nil {
		return BatchName{}, err
	}
	if err := d.checkLimits(batch, m, codec); err != nil {
		return BatchName{}, err
	}
	if err := checkRows(batch, m); err != nil {
		return BatchName{}, err
	}
	name := m.Name()
	tmp, err := d.writeTmpFolder(ctx, batch, m, codec)
	if err != nil {
		return BatchName{}, fmt.Errorf("publish batch %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		_ = os.RemoveAll(tmp)
		return BatchName{}, fmt.Errorf("publish batch %s: %w", name, err)
	}
	var notify func()
	if visible != nil {
		notify = func() { visible(name) }
	}
	if err := d.fs.RenameNotify(tmp, d.Path(StateIncoming, name.String()), notify); err != nil {
		if !isSyncErr(err) {
			_ = os.RemoveAll(tmp)
		}
		return BatchName{}, fmt.Errorf("publish batch %s: %w", name, err)
	}
	d.fail(StepCommitted)
	d.prepareNext(m.Producer.Instance, codec.Extension())
	d.log.Debug("spool batch published", "batch", name.String(), "entries", len(m.Entries), "rows", batch.Rows())
	return name, nil
}

// buildManifest checks the batch's header and entries and returns its
// manifest without the data file fields. A non-append entry with rows or
// a Source, or an append entry with both, is refused (ErrInvalid).
func buildManifest(batch *recordstore.Batch) (*Manifest, error) {
	m := &Manifest{Format: ManifestFormat, ID: batch.ID, Producer: batch.Producer, Created: batch.Created.UTC(),
		Schemas: batch.Schemas, Entries: make([]Entry, len(batch.Entries))}
	for i := range batch.Entries {
		e := &batch.Entries[i]
		if e.Source != nil && len(e.Rows) > 0 {
			return nil, recordstore.Invalidf("spool: entry %d (%s) has both rows and a row source", i, e.Op)
		}
		if e.Op != recordstore.OpAppend && (len(e.Rows) > 0 || e.Source != nil) {
			return nil, recordstore.Invalidf("spool: entry %d (%s) carries rows", i, e.Op)
		}
		m.Entries[i] = entryOf(e)
	}
	if err := m.Validate(); err != nil { // with every append entry still file-less
		return nil, err
	}
	return m, nil
}

// writeTmpFolder writes the batch into a folder of tmp/ — the prepared one
// when there is one (see Options.Prepare), else tmp/<instance>-<id>/ —
// and returns its path. On error no folder of it is left.
func (d *Dir) writeTmpFolder(ctx context.Context, batch *recordstore.Batch, m *Manifest, codec Codec) (string, error) {
	if p := d.takePrepared(); p != nil {
		err := d.writeTmp(ctx, p.path, p, batch, m, codec)
		if err == nil {
			return p.path, nil
		}
		_ = os.RemoveAll(p.path)
		if !errors.Is(err, fs.ErrNotExist) || streams(batch) {
			return "", err // a Source read already cannot be read again
		}
		// The prepared folder was removed under us (tmp/ GC): start over.
	}
	tmp := d.Path(StateTmp, m.Producer.Instance+"-"+m.ID)
	if err := d.writeTmp(ctx, tmp, nil, batch, m, codec); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// dataFileName names the data file of entry i (from 0).
func dataFileName(i int, ext string) string { return fmt.Sprintf("e%05d%s", i+1, ext) }

// writeTmp writes the batch's files into tmp, a new folder — or, with
// prepared, the prepared folder at tmp — and fsyncs them and the folder
// (all but the folder of a durable prepared folder whose files are exactly
// the ones written). Prepared files it does not need are removed first.
func (d *Dir) writeTmp(ctx context.Context, tmp string, prepared *prepared, batch *recordstore.Batch, m *Manifest, codec Codec) error {
	if prepared != nil {
		return d.fillTmp(ctx, tmp, prepared, batch, m, codec)
	}
	if err := d.fs.FS.Mkdir(tmp, fsutil.DirMode); errors.Is(err, fs.ErrExist) {
		// An earlier attempt of this batch left its folder behind.
		if err := os.RemoveAll(tmp); err != nil {
			return fmt.Errorf("remove earlier attempt: %w", err)
		}
		err = d.fs.FS.Mkdir(tmp, fsutil.DirMode)
		if err != nil {
			return fmt.Errorf("create tmp folder: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("create tmp folder: %w", err)
	}
	return d.fillTmp(ctx, tmp, nil, batch, m, codec)
}

// fillTmp is writeTmp once the folder exists.
func (d *Dir) fillTmp(ctx context.Context, tmp string, prep *prepared, batch *recordstore.Batch, m *Manifest, codec Codec) error {
	var prepared map[string]bool // the empty files in a prepared folder
	if prep != nil {
		prepared = prep.files
	}
	// The folder needs an fsync unless it is a durable prepared folder
	// whose files are exactly the ones written.
	syncDir := prep == nil || !prep.durable
	d.fail(StepTmpCreated)
	used := map[string]bool{}
	var files []fsutil.NamedData // the data files, then the manifest
	for i := range batch.Entries {
		e := &batch.Entries[i]
		if e.Op != recordstore.OpAppend || entryRows(e) == 0 {
			continue
		}
		file := dataFileName(i, codec.Extension())
		kind := m.Schema(e.Kind)
		used[file] = true
		syncDir = syncDir || !prepared[file]
		files = append(files, fsutil.NamedData{Path: filepath.Join(tmp, file), Prepared: prepared[file], Fill: func(w io.Writer) error {
			sink := func(p []byte) error {
				_, err := w.Write(p)
				return err
			}
			rows := int64(len(e.Rows))
			var n int64
			var sum string
			var err error
			if e.Source != nil {
				rows, n, sum, err = encodeSource(ctx, codec, kind, e.Source, d.limits.MaxBytes, sink)
			} else {
				n, sum, err = encodeEntry(ctx, codec, kind, e.Rows, d.limits.MaxBytes, sink)
			}
			if err != nil {
				return fmt.Errorf("entry %d: %w", i, err)
			}
			me := &m.Entries[i]
			me.File, me.Format, me.Rows, me.Bytes, me.SHA256 = file, codec.Name(), rows, n, sum
			return nil
		}})
	}
	files = append(files, fsutil.NamedData{Path: filepath.Join(tmp, ManifestFile), Prepared: prepared[ManifestFile], Fill: func(w io.Writer) error {
		d.fail(StepDataWritten)
		data, err := m.Encode() // the data files are written: their sizes and sums are known
		if err != nil {
			return err
		}
		if _, err = w.Write(data); err != nil {
			return err
		}
		d.fail(StepManifestWritten)
		return nil
	}})
	used[ManifestFile] = true
	syncDir = syncDir || !prepared[ManifestFile]
	for name := range prepared {
		if !used[name] {
			// Before the folder's fsync, which must not record it.
			if err := os.Remove(filepath.Join(tmp, name)); err != nil {
				return err
			}
			syncDir = true
		}
	}
	// The data files are encoded straight into them, then the manifest is
	// written, and all of them and the folder are fsynced together: one
	// fsync of latency. A durable prepared folder whose files are exactly
	// these needs no folder fsync.
	write := func() error { return d.fs.CreateFiles(tmp, files, fsutil.FileMode) }
	if !syncDir {
		write = func() error { return d.fs.RewriteFiles(files, fsutil.FileMode) }
	}
	if err := write(); err != nil {
		return err
	}
	d.fail(StepTmpSynced)
	return nil
}

// checkLimits refuses, before anything is written, a batch with more
// rows than the limit, and — unless codec writes NDJSON lines, whose size
// encodeEntry checks exactly — one with an entry whose estimated NDJSON
// size (estimateRow) exceeds the byte limit. A streamed entry's rows count
// as many as its Source announces; its size is checked as it is encoded.
func (d *Dir) checkLimits(batch *recordstore.Batch, m *Manifest, codec Codec) error {
	if max := d.limits.MaxRows; max > 0 {
		if rows := batch.Rows(); rows > max {
			return fmt.Errorf("publish batch %s: %w: %d rows, the limit is %d", m.ID, ErrTooManyRows, rows, max)
		}
	}
	limit := d.limits.MaxBytes
	if _, lines := codec.(lineStream); lines || limit <= 0 {
		return nil
	}
	for i, e := range batch.Entries {
		if e.Op != recordstore.OpAppend || e.Source != nil {
			continue
		}
		kind := m.Schema(e.Kind)
		var size int64
		for _, v := range e.Rows {
			if size += estimateRow(kind, v); size > limit {
				return fmt.Errorf("publish batch %s: entry %d: %w", m.ID, i, tooLarge(limit))
			}
		}
	}
	return nil
}

// checkRows refuses, before anything is written, an append entry whose
// rows an owner would refuse as a whole: a row with another number of
// values than its kind has columns, a null required or key column, or two
// rows with the same key (one append cannot hold both). The values' types
// are checked as they are encoded, and so are the rows of a streamed entry
// (Source).
func checkRows(batch *recordstore.Batch, m *Manifest) error {
	for i, e := range batch.Entries {
		if e.Op != recordstore.OpAppend || len(e.Rows) == 0 {
			continue
		}
		if err := checkEntryRows(m.Schema(e.Kind), e.Rows); err != nil {
			return fmt.Errorf("publish batch %s: entry %d: %w", m.ID, i, err)
		}
	}
	return nil
}

// checkEntryRows is checkRows for the rows of one entry, of kind.
func checkEntryRows(kind *recordstore.Kind, rows []recordstore.Values) error {
	check := newRowCheck(kind)
	defer check.close()
	for j, v := range rows {
		if err := check.check(j, v); err != nil {
			return err
		}
	}
	return check.done()
}

// streams reports whether an entry of batch streams its rows (Source).
func streams(batch *recordstore.Batch) bool {
	for i := range batch.Entries {
		if batch.Entries[i].Source != nil {
			return true
		}
	}
	return false
}

// tooLarge is the ErrTooLarge of an entry over the byte limit.
func tooLarge(limit int64) error {
	return recordstore.Errorf(ErrTooLarge, "its rows take more than the limit of %d bytes as NDJSON; split them into several appends", limit)
}

func writeRows(ctx context.Context, enc Encoder, rows []recordstore.Values) error {
	for i, r := range rows {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := enc.Write(r); err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	return enc.Close()
}

// hashWriter counts and hashes what it passes on.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

func isSyncErr(err error) bool { return errors.Is(err, fsutil.ErrSync) }
