// Backup and Import: a consistent copy of a store taken with VACUUM INTO
// (also while another process appends), and a copy brought back into the
// fleet through a staging folder, checked, and published without
// replacing anything.

package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var tmpSeq atomic.Uint64

// Backup writes a consistent copy of the store of k to dest (VACUUM INTO,
// one read transaction: a snapshot even while another process appends),
// 0600. The destination is checked first, before the store is read: an
// empty dest is recordstore.ErrInvalid; a file at dest is ErrExists (never
// replaced or followed); a missing folder on the way is
// recordstore.ErrNotFound (none is created); a dest inside the fleet's
// root is recordstore.ErrInvalid (it would be a stray there); a
// destination folder, or one above it, that belongs to another user than
// this one or root, or that others can write (unless sticky, as /tmp is),
// is ErrUnsafeDest. The store must exist and record k.
//
// On error dest is absent: the copy is made in a temp file beside dest,
// linked to dest, and the temp file is removed.
func (f *Fleet) Backup(ctx context.Context, k Key, dest string) error {
	abs, err := f.Path(k)
	if err != nil {
		return err
	}
	dest, dir, err := f.checkDest(dest)
	if err != nil {
		return err
	}
	id, err := readIdentity(ctx, abs)
	if errors.Is(err, errNoStore) {
		return recordstore.Errorf(recordstore.ErrNotFound, "no store for %s", k)
	}
	if err != nil {
		return err
	}
	if err := checkIdentity(id, k, abs); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+filepath.Base(dest)+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(tmpSeq.Add(1), 10))
	defer os.Remove(tmp)
	if err := vacuumInto(ctx, abs, tmp); err != nil {
		return fmt.Errorf("backup %s: %w", k, err)
	}
	if err := fsutil.SyncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, dest); errors.Is(err, fs.ErrExist) {
		return errorf(ErrExists, "backup destination %s", dest)
	} else if err != nil {
		return fmt.Errorf("backup %s: %w", k, err)
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("backup %s: %w", k, err)
	}
	return fsutil.SyncDir(dir)
}

// vacuumInto copies the database at src into the new file dst (created
// 0600 first, empty, which VACUUM INTO takes), reading src read-only.
func vacuumInto(ctx context.Context, src, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	// Not query_only, which refuses VACUUM INTO; the statement only
	// reads src.
	db, err := openRaw(src, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("vacuum %s into %s: %w", src, dst, err)
	}
	return nil
}

// checkDest checks a backup destination (see Backup) and returns it made
// absolute, and its folder.
func (f *Fleet) checkDest(dest string) (abs, dir string, err error) {
	if dest == "" {
		return "", "", recordstore.Invalidf("the backup destination is empty: name a new file")
	}
	abs, err = filepath.Abs(dest)
	if err != nil {
		return "", "", fmt.Errorf("backup destination %s: %w", dest, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return "", "", errorf(ErrExists, "backup destination %s is there already (it is never replaced)", abs)
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return "", "", fmt.Errorf("stat %s: %w", abs, err)
	}
	dir = filepath.Dir(abs)
	if err := checkDestDir(dir); err != nil {
		return "", "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", fmt.Errorf("backup destination folder %s: %w", dir, err)
	}
	if within(f.root, real) {
		return "", "", recordstore.Invalidf("backup destination %s lies inside the fleet root %s: keep backups outside it", abs, f.root)
	}
	return abs, dir, nil
}

// checkDestDir refuses a destination folder that is missing
// (recordstore.ErrNotFound) or that another user could change: it, and
// each folder above it, must belong to root or to this user and must not
// be writable by others unless sticky.
func checkDestDir(dir string) error {
	uid := os.Getuid()
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return recordstore.Errorf(recordstore.ErrNotFound, "backup destination folder %s does not exist (it is not created)", d)
		}
		if err != nil {
			return fmt.Errorf("backup destination folder %s: %w", d, err)
		}
		if !fi.IsDir() {
			return recordstore.Invalidf("backup destination folder %s is not a folder", d)
		}
		if owner, ok := fileOwner(fi); ok && owner != 0 && owner != uid {
			return errorf(ErrUnsafeDest, "backup destination folder %s belongs to user %d", d, owner)
		}
		if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return errorf(ErrUnsafeDest, "others can write %s, a folder of the backup destination", d)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// Import copies src (a backup of the store of k) into the fleet as k: the
// copy is made in a staging folder beside the store path (VACUUM INTO,
// src read-only and unchanged), checked (PRAGMA integrity_check; its
// identity row must record k; the fleet's kinds are reconciled with its
// catalog, additively) and published without replacing a file. A key that
// has a store is ErrExists; a source that fails a check is
// ErrInvalidSource. On error nothing is published and the staging folder
// is removed.
func (f *Fleet) Import(ctx context.Context, k Key, src string) error {
	return f.importFrom(ctx, k, src, false)
}

// Adopt is Import for a store not made by a fleet: a source that records
// no fleet key (a single store's live file, as query --store keeps it in
// v1/) gets k's identity, stamped on the staged copy; src is unchanged. A
// source that records a key must record k, as for Import: a store is never
// given another key. Every other check, the kinds and the publication are
// Import's; so are the errors and what is on disk after one.
func (f *Fleet) Adopt(ctx context.Context, k Key, src string) error {
	return f.importFrom(ctx, k, src, true)
}

// importFrom is Import, and Adopt when adopt is set.
func (f *Fleet) importFrom(ctx context.Context, k Key, src string, adopt bool) error {
	abs, err := f.Path(k)
	if err != nil {
		return err
	}
	if f.isDeleting(k) {
		return errorf(ErrDeleting, "%s", k)
	}
	fi, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return recordstore.Errorf(recordstore.ErrNotFound, "import source %s does not exist", src)
	}
	if err != nil {
		return fmt.Errorf("import source %s: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return errorf(ErrInvalidSource, "%s is not a regular file", src)
	}
	return f.create(ctx, k, abs, func(ctx context.Context, tmp string) error {
		return f.stageImport(ctx, k, src, tmp, adopt)
	})
}

// stageImport makes the checked copy of src at tmp, stamping k's identity
// on it when it records none and adopt is set.
func (f *Fleet) stageImport(ctx context.Context, k Key, src, tmp string, adopt bool) error {
	invalid := func(format string, args ...any) error {
		return errorf(ErrInvalidSource, "%s: %s", src, fmt.Sprintf(format, args...))
	}
	if err := vacuumInto(ctx, src, tmp); err != nil {
		return invalid("cannot copy it: %v", err)
	}
	db, err := openRaw(tmp, false)
	if err != nil {
		return err
	}
	complaint, err := integrity(ctx, db, false)
	var id string
	if err == nil && complaint == "" {
		id, err = identityOf(ctx, db, src)
	}
	db.Close()
	switch {
	case err != nil:
		return invalid("cannot read it: %v", err)
	case complaint != "":
		return invalid("integrity_check: %s", complaint)
	case id == "" && adopt:
		if err := writeIdentity(ctx, tmp, k, f.opts.Now()); err != nil {
			return invalid("cannot record its key: %v", err)
		}
	case id == "":
		return invalid("it records no fleet key (not made by a fleet; --adopt gives it this one)")
	case id != k.String():
		return invalid("it records key %s, not %s", cut(id), k)
	}
	b, err := sqlite.Open(ctx, tmp, sqlite.Options{LiveFile: tmp, SweepInterval: -1, ReadConns: 1})
	if err != nil {
		return invalid("not a records store: %v", err)
	}
	for _, kind := range f.opts.Kinds {
		if _, err := b.DeclareKind(ctx, kind); err != nil {
			b.Close()
			return invalid("kind %s: %v", kind.Name, err)
		}
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("import %s: %w", k, err)
	}
	if fi, err := os.Stat(tmp + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("import %s: the staging file kept a -wal", k)
	}
	return nil
}
