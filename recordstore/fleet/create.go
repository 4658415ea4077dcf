// Staged atomic create: a new store is built — the fleet's kinds, then its
// identity row — in a private staging folder made exclusively beside its
// path, and published with a link that never replaces a file. A store is
// absent or complete, never half made.

package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// stagingPrefix starts the name of a staging folder: a template segment
// never starts with '.', so list never reads one as a store.
const stagingPrefix = ".staging-"

// Provision creates the store of k, with the fleet's kinds and its identity
// row, and does not open it. Of concurrent provisions of one key (in any
// processes) exactly one succeeds; the others, and a provision of a key
// that has a store, get ErrExists. The root must exist; the bucket
// folders are created (0700).
//
// On error nothing is published: the store path is as it was, the bucket
// folders it made are removed again, and the
// staging folder has been removed (unless the process died, when a folder
// named .staging-* stays beside the path; it is never read as a store).
func (f *Fleet) Provision(ctx context.Context, k Key) error {
	abs, err := f.Path(k)
	if err != nil {
		return err
	}
	if f.isDeleting(k) {
		return errorf(ErrDeleting, "%s", k)
	}
	return f.create(ctx, k, abs, func(ctx context.Context, tmp string) error {
		return f.build(ctx, k, tmp)
	})
}

// create stages a store file with fill and publishes it at abs. The file
// records k (fill checks or writes it), so its stamp is remembered as a
// checked identity, once the staging folder is gone (removing the staged
// name changes the file's ctime): a first open by this process skips the
// identity read (see stamp.go).
func (f *Fleet) create(ctx context.Context, k Key, abs string, fill func(ctx context.Context, tmp string) error) error {
	if err := f.createStaged(ctx, k, abs, fill); err != nil {
		return err
	}
	f.rememberIdentity(k, abs, nil)
	return nil
}

// createStaged is create's work: stage, fsync, publish, clean up.
func (f *Fleet) createStaged(ctx context.Context, k Key, abs string, fill func(ctx context.Context, tmp string) error) (err error) {
	if _, err := os.Lstat(abs); err == nil {
		return errorf(ErrExists, "%s has a store", k)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", abs, err)
	}
	dir := filepath.Dir(abs)
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
		// Bucket folders this create makes go again when it fails.
		defer func() {
			if err != nil {
				f.removeEmptyParents(dir)
			}
		}()
	}
	if err := fsutil.MkdirAll(dir); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(dir, stagingPrefix+filepath.Base(abs)+"-")
	if err != nil {
		return fmt.Errorf("make a staging folder for %s: %w", k, err)
	}
	defer f.removeStaging(staging)
	tmp := filepath.Join(staging, filepath.Base(abs))
	if err := fill(ctx, tmp); err != nil {
		return err
	}
	if err := fsutil.SyncFile(tmp); err != nil {
		return err
	}
	if h := f.hooks.beforePublish; h != nil {
		if err := h(abs); err != nil {
			return err
		}
	}
	if err := publish(tmp, abs, k); err != nil {
		return err
	}
	f.stats.creates.Add(1)
	return nil
}

// publish links tmp at abs, never replacing a file, and fsyncs the folder
// (so that the new name survives a crash).
func publish(tmp, abs string, k Key) error {
	if err := os.Link(tmp, abs); errors.Is(err, fs.ErrExist) {
		return errorf(ErrExists, "%s has a store", k)
	} else if err != nil {
		return fmt.Errorf("publish the store of %s: %w", k, err)
	}
	return fsutil.SyncDir(filepath.Dir(abs))
}

// removeStaging removes a staging folder and fsyncs its parent.
func (f *Fleet) removeStaging(staging string) {
	if err := os.RemoveAll(staging); err != nil {
		f.log.Warn("remove staging folder", "path", staging, "err", err)
		return
	}
	if err := fsutil.SyncDir(filepath.Dir(staging)); err != nil {
		f.log.Warn("fsync after removing staging folder", "path", staging, "err", err)
	}
}

// build makes a new store file at tmp: the engine's tables and the fleet's
// kinds (through the SQLite backend, alone: nobody else knows the staging
// folder), then the identity row. It leaves the file without -wal.
func (f *Fleet) build(ctx context.Context, k Key, tmp string) error {
	b, err := sqlite.Open(ctx, tmp, sqlite.Options{LiveFile: tmp, SweepInterval: -1, ReadConns: 1})
	if err != nil {
		return fmt.Errorf("create the store of %s: %w", k, err)
	}
	for _, kind := range f.opts.Kinds {
		if _, err := b.DeclareKind(ctx, kind); err != nil {
			b.Close()
			return fmt.Errorf("create the store of %s: %w", k, err)
		}
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("create the store of %s: %w", k, err)
	}
	if err := writeIdentity(ctx, tmp, k, f.opts.Now()); err != nil {
		return err
	}
	if fi, err := os.Stat(tmp + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("create the store of %s: %w", k, recordstore.Errorf(recordstore.ErrUnsupported, "the staging file kept a -wal"))
	}
	return nil
}
