// One due window: fold an archive already at the final name, merge,
// gzip, publish, then delete what the archive covers — on dot-prefixed
// work files named with the lock token, fenced before every publish and
// delete.

package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/merge"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/klauspost/compress/gzip"
)

// workFiles are a window's work files, all dot-prefixed and named with
// the token: the merge output, the gunzipped archive being folded, and the
// compressed archive before it is published.
type workFiles struct {
	merged, previous, gz string
}

func (p *pass) workFiles(final string) workFiles {
	t := p.rep.Token
	return workFiles{
		merged:   filepath.Join(p.dir, "."+t+".merge.db"),
		previous: filepath.Join(p.dir, "."+t+".previous.db"),
		gz:       filepath.Join(p.dir, dbfiles.ArchiveWorkName(final, t)),
	}
}

// remove deletes the work files and their sidecars.
func (w workFiles) remove() {
	for _, f := range []string{w.merged, w.previous, w.gz} {
		for _, s := range []string{"", "-wal", "-shm", "-journal"} {
			_ = os.Remove(f + s)
		}
	}
}

// archiveWindow archives one due window and records the outcome in the
// report. A failure is logged (recorder_archive_failed) and listed in
// Report.Failed; the window's sources that were not yet deleted stay.
func (p *pass) archiveWindow(ctx context.Context, w dueWindow) {
	final := w.ArchiveName(p.cluster)
	work := p.workFiles(final)
	defer work.remove()
	err := p.window(ctx, w, final, work)
	if err == nil {
		return
	}
	if errors.Is(err, ErrFenced) {
		p.rep.Fenced = true
	}
	p.log.Error("recorder_archive_failed", "archive", final, "sources", len(w.sources), "error", err)
	p.rep.Failed = append(p.rep.Failed, Failed{Archive: final, Error: err.Error()})
	p.emit(Event{Kind: EventWindowFailed, Name: final})
}

// window does the steps of archiveWindow.
func (p *pass) window(ctx context.Context, w dueWindow, final string, work workFiles) error {
	finalPath := filepath.Join(p.dir, final)
	covered, folded, err := p.unfold(ctx, finalPath, work.previous)
	if err != nil {
		return err
	}
	var fresh, old []string
	for _, s := range w.sources {
		if covered[s] {
			old = append(old, s)
		} else {
			fresh = append(fresh, filepath.Join(p.dir, s))
		}
	}
	var merged []string
	if len(fresh) > 0 {
		merged, err = p.mergeAndPublish(ctx, w, final, work, fresh, folded)
		if err != nil {
			return err
		}
	}
	// The covered sources are in the archive already: delete them too.
	for _, s := range old {
		merged = append(merged, filepath.Join(p.dir, s))
	}
	return p.deleteSources(merged, final)
}

// mergeAndPublish merges the fresh sources (after the folded archive,
// when there is one), sets aside the unreadable ones, and publishes the
// result when it holds at least one fresh source. It returns the fresh
// sources merged: the ones the caller deletes.
func (p *pass) mergeAndPublish(ctx context.Context, w dueWindow, final string, work workFiles, fresh []string, folded bool) ([]string, error) {
	inputs := fresh
	if folded {
		inputs = append([]string{work.previous}, fresh...)
	}
	res, err := merge.Merge(ctx, work.merged, inputs, merge.Options{
		Logger: p.log, TempDir: p.dir, AllOrNothing: true, CacheKiB: p.opts.MergeCacheKiB,
	})
	if folded && (len(res.Sources) == 0 || res.Sources[0].Status != merge.StatusMerged) {
		return nil, recordstore.Errorf(ErrCorruptArchive, "%s: fold: %w", final, errors.Join(err, sourceErr(res)))
	}
	if err != nil && !errors.Is(err, merge.ErrNothingMerged) {
		return nil, fmt.Errorf("merge %s: %w", final, err)
	}
	var merged, unreadable []string
	for _, s := range res.Sources {
		switch {
		case s.Path == work.previous:
		case s.Status == merge.StatusMerged:
			merged = append(merged, s.Path)
		case !errors.Is(s.Err, fs.ErrNotExist): // gone: another pass deleted it
			unreadable = append(unreadable, s.Path)
		}
	}
	if len(merged) > 0 {
		if err := p.publish(ctx, w, final, work, res, len(merged), folded); err != nil {
			return nil, err
		}
	}
	if err := p.setAside(unreadable); err != nil {
		return nil, err
	}
	return merged, nil
}

// sourceErr is the folded archive's error in res, if any.
func sourceErr(res merge.Result) error {
	if len(res.Sources) > 0 {
		return res.Sources[0].Err
	}
	return nil
}

// publish compresses the merge output and moves it to the final name:
// over the folded archive (whose rows it holds), or by a hard link that
// never overwrites an archive that appeared meanwhile. The lock is read
// again first: a fenced pass publishes nothing.
func (p *pass) publish(ctx context.Context, w dueWindow, final string, work workFiles, res merge.Result, sources int, folded bool) error {
	p.emit(Event{Kind: EventMerged, Name: final})
	if err := gzipFile(ctx, work.merged, work.gz); err != nil {
		return err
	}
	p.failpoint(FailAfterGzip)
	if !p.lk.holds() {
		return ErrFenced
	}
	finalPath := filepath.Join(p.dir, final)
	if folded {
		if err := fsutil.Rename(work.gz, finalPath); err != nil {
			return fmt.Errorf("publish %s: %w", final, err)
		}
	} else {
		if err := os.Link(work.gz, finalPath); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return recordstore.Errorf(ErrArchiveAppeared, "%s", final)
			}
			return fmt.Errorf("publish %s: %w", final, err)
		}
		if err := fsutil.SyncDir(p.dir); err != nil {
			return fmt.Errorf("publish %s: %w", final, err)
		}
	}
	var size int64
	if fi, err := os.Stat(finalPath); err == nil {
		size = fi.Size()
	}
	p.log.Info("recorder_archive_published", "archive", final, "sources", sources, "folded", folded,
		"events", res.Events, "size_bytes", size)
	p.rep.Published = append(p.rep.Published, Published{Archive: final, Window: w.Window, Sources: sources,
		Folded: folded, Events: res.Events, SizeBytes: size})
	p.emit(Event{Kind: EventPublished, Name: final})
	p.failpoint(FailAfterPublish)
	return nil
}

// gzipFile compresses src into a new file dst (0600, fsynced).
func gzipFile(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	defer in.Close()
	err = fsutil.Default.CreateFile(dst, fsutil.FileMode, func(w io.Writer) error {
		zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
		if err != nil {
			return err
		}
		if _, err := io.Copy(zw, ctxReader{ctx, in}); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	return nil
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// deleteSources deletes the sources an archive now covers, each with its
// meta file, reading the lock before each one; the folder is fsynced at
// the end.
func (p *pass) deleteSources(paths []string, final string) error {
	if len(paths) == 0 {
		return nil
	}
	defer func() { _ = fsutil.SyncDir(p.dir) }()
	for i, path := range paths {
		if i == len(paths)/2 && i > 0 {
			p.failpoint(FailMidDeletes)
		}
		if !p.lk.holds() {
			return ErrFenced
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete archived source: %w", err)
		}
		meta := filepath.Join(p.dir, dbfiles.MetaFileName(filepath.Base(path)))
		if err := os.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.log.Warn("recorder_archive_failed", "stage", "delete_meta", "file", meta, "error", err)
		}
		name := filepath.Base(path)
		p.log.Info("recorder_archive_source_deleted", "db_path", path, "archive", final)
		p.rep.Deleted = append(p.rep.Deleted, name)
		p.emit(Event{Kind: EventDeleted, Name: name, Archive: final})
	}
	return nil
}

// setAside renames each unreadable source to <name>.unreadable: never
// deleted, never merged again, its meta file left for the sweep.
func (p *pass) setAside(paths []string) error {
	for _, path := range paths {
		if !p.lk.holds() {
			return ErrFenced
		}
		if err := fsutil.Rename(path, path+".unreadable"); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("set aside unreadable source: %w", err)
		}
		name := filepath.Base(path)
		p.log.Warn("recorder_archive_source_unreadable", "db_path", path, "renamed_to", name+".unreadable")
		p.rep.SetAside = append(p.rep.SetAside, name)
		p.emit(Event{Kind: EventSetAside, Name: name})
	}
	return nil
}
