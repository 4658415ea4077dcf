// Files on disk: where the live file lives, creating it with the right
// modes, and the connection strings of the writer and the reader pool.

package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// CatalogVersion is the layout version of the live file: the bookkeeping
// tables and how kinds map to tables. It is part of the live file's path,
// so a build with another layout opens another file.
const CatalogVersion = 1

// LivePath maps the configured store path P (e.g. data/records.sqlite) to
// the live file <dir(P)>/v1/<base(P)> (data/v1/records.sqlite). The live
// file keeps P's file name so that two stores configured in one folder
// (data/a.sqlite, data/b.sqlite), each with its own lock, never share a
// live file.
func LivePath(path string) string {
	path = filepath.Clean(path) // "data/" names data, as Open takes it
	return filepath.Join(filepath.Dir(path), "v"+strconv.Itoa(CatalogVersion), filepath.Base(path))
}

// sqliteSuffixes end the names of the files SQLite keeps beside a
// database: a store path ending in one could name another store's.
var sqliteSuffixes = []string{"-wal", "-shm", "-journal"}

// CheckPath reports whether Open would take path as a store path (see
// checkPath), without touching the disk: a caller that creates files
// beside the store (owner.Open: the lock, the spool) checks first.
func CheckPath(path string) error {
	_, err := checkPath(path)
	return err
}

// CheckFiles is CheckPath, and also refuses with recordstore.ErrInvalid a
// path that is a directory or a device (anything but a regular file or
// nothing), or whose live file is, or under a parent that is not a
// directory. It only stats: nothing is created. A store path names no file
// of its own (the live file is LivePath), so a folder or /dev/null given
// as one is a mistake to be told, not a place to create files beside.
func CheckFiles(path string) error {
	abs, err := checkPath(path)
	if err != nil {
		return err
	}
	return checkFiles(path, abs, LivePath(abs))
}

// CheckFilesAt is CheckFiles for a store whose live file is live
// (Options.LiveFile) instead of LivePath(path): it refuses, with
// recordstore.ErrInvalid and creating nothing, a live file (or a store
// path) that is a directory, a device or under a parent that is not a
// directory, and a live file Open would refuse as Options.LiveFile.
func CheckFilesAt(path, live string) error {
	abs, err := checkPath(path)
	if err != nil {
		return err
	}
	liveAbs, err := liveFile(abs, Options{LiveFile: live})
	if err != nil {
		return err
	}
	return checkFiles(path, abs, liveAbs)
}

func checkFiles(path, abs, live string) error {
	for _, p := range []string{abs, live} {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, syscall.ENOTDIR):
			return recordstore.Invalidf("store path %s: a parent of %s is not a directory", path, p)
		case err != nil:
			return fmt.Errorf("stat store path %s: %w", p, err)
		case fi.IsDir():
			return recordstore.Invalidf("store path %s: %s is a directory", path, p)
		case !fi.Mode().IsRegular():
			return recordstore.Invalidf("store path %s: %s is %s, not a regular file", path, p, fileType(fi.Mode()))
		}
	}
	return nil
}

// liveFile returns the live file of the store at abs: Options.LiveFile,
// made absolute and checked as checkPath checks a store path, or
// LivePath(abs).
func liveFile(abs string, opts Options) (string, error) {
	if opts.LiveFile == "" {
		return LivePath(abs), nil
	}
	live, err := checkPath(opts.LiveFile)
	if err != nil {
		return "", fmt.Errorf("sqlite.Options.LiveFile: %w", err)
	}
	return filepath.Clean(live), nil
}

// fileType names the type of a file that is not regular.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// checkPath refuses configured paths the driver cannot take: empty,
// holding a NUL byte, or whose file name ends like a file SQLite keeps
// beside a database. Every other byte is fine: connections name the file
// by FileURI.
func checkPath(path string) (string, error) {
	if path == "" {
		return "", recordstore.Invalidf("store path is empty")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", recordstore.Invalidf("store path %q: a NUL byte is not allowed", path)
	}
	for _, suffix := range sqliteSuffixes {
		if strings.HasSuffix(path, suffix) {
			return "", recordstore.Invalidf("store path %q: a file name ending in %q is SQLite's own", path, suffix)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve store path %s: %w", path, err)
	}
	return abs, nil
}

// createLive makes the live file's folders (0700) and the file itself
// (0600) before SQLite opens it, so that SQLite never creates it with
// umask-derived modes. The -wal and -shm files take the mode of the
// database file; fixModes enforces it afterwards anyway.
func createLive(live string) error {
	dir := filepath.Dir(live)
	if err := fsutil.MkdirAll(dir); err != nil {
		return fmt.Errorf("create store folder: %w", err)
	}
	f, err := os.OpenFile(live, os.O_RDWR|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create live file: %w", err)
	}
	err = f.Chmod(fsutil.FileMode) // the umask may have cleared bits of 0600
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create live file: %w", err)
	}
	return fsutil.SyncDir(dir)
}

// matchSidecarModes gives the live file's -wal and -shm files the live
// file's permission bits, before the writer opens it. SQLite creates them
// with the live file's mode, and never changes the mode of one that
// exists: after the live file was made 0400 for a while, they would stay
// 0400 once it is 0600 again, and no writer (but root) could open the
// store. A chmod that fails (the file belongs to another user) is logged
// and left to SQLite to report.
func (b *Backend) matchSidecarModes() {
	fi, err := os.Stat(b.live)
	if err != nil {
		return // createLive made it; the writer's open reports what is wrong
	}
	for _, p := range []string{b.live + "-wal", b.live + "-shm"} {
		si, err := os.Stat(p)
		if err != nil || si.Mode().Perm() == fi.Mode().Perm() {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()); err != nil {
			b.log.Warn("cannot give a file SQLite keeps beside the live file the live file's mode", "file", p, "err", err)
		}
	}
}

// SQLite's primary result code for a write refused because the file or
// its folder cannot be written.
const sqliteReadOnly = 8 // SQLITE_READONLY: "attempt to write a readonly database"

// unwritable wraps *err, an error of opening the writer, in
// recordstore.ErrReadOnly naming the file that cannot be written, when
// SQLite could not write (SQLITE_READONLY, SQLITE_CANTOPEN, or permission
// denied) and one of the live file, its -wal and -shm files, or its folder
// is not writable by this process.
func (b *Backend) unwritable(err *error) {
	if *err == nil || errors.Is(*err, recordstore.ErrReadOnly) || !cannotWrite(*err) {
		return
	}
	for _, p := range []string{b.live, b.live + "-wal", b.live + "-shm", filepath.Dir(b.live)} {
		fi, serr := os.Stat(p)
		if serr != nil || writable(p) {
			continue
		}
		*err = recordstore.Errorf(recordstore.ErrReadOnly, "%s is not writable by this process (mode %s): %w", p, fi.Mode().Perm(), *err)
		return
	}
}

// cannotWrite reports whether err is SQLite (or the OS) refusing to write.
func cannotWrite(err error) bool {
	if errors.Is(err, fs.ErrPermission) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqliteReadOnly || c == sqliteCantOpen
}

// fixModes makes the live file and its -wal and -shm companions 0600
// whatever the umask was when SQLite created them.
func fixModes(live string) error {
	for _, p := range []string{live, live + "-wal", live + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if fi.Mode().Perm() != fsutil.FileMode {
			if err := os.Chmod(p, fsutil.FileMode); err != nil {
				return fmt.Errorf("chmod %s: %w", p, err)
			}
		}
	}
	return nil
}

// writerDSN is the connection string of the single writer connection:
// WAL, synchronous=NORMAL, busy_timeout, and BEGIN IMMEDIATE for every
// transaction so that a second writer waits instead of failing on upgrade;
// with noCheckpoint, wal_autocheckpoint=0 (Options.NoCheckpoint).
func writerDSN(live string, busy time.Duration, noCheckpoint bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if noCheckpoint {
		q.Add("_pragma", "wal_autocheckpoint(0)")
	}
	q.Set("_txlock", "immediate")
	return FileURI(live, q)
}

// readerDSN is the connection string of the backend's reader pool (see
// readerDSN, and Options.ReadOnlyFile for the other two modes).
func (b *Backend) readerDSN() string {
	switch {
	case b.immutable:
		return fileURI(b.live, "immutable=1") + "&" + readerPragmas(b.opts.BusyTimeout)
	case b.opts.ReadOnlyFile:
		return fileURI(b.live, "mode=ro") + "&" + readerPragmas(b.opts.BusyTimeout)
	}
	return readerDSN(b.live, b.opts.BusyTimeout)
}

// readerDSN is the connection string of the reader pool: query_only, so a
// reader can never write, and deferred transactions so readers never take
// the write lock. mode=rw: a connection the pool opens after the live file
// was removed (by hand, or a fleet's Delete while this process only reads)
// fails instead of creating an empty file in its place.
func readerDSN(live string, busy time.Duration) string {
	return fileURI(live, "mode=rw") + "&" + readerPragmas(busy)
}

// readerPragmas are the driver's parameters of a reader connection.
func readerPragmas(busy time.Duration) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "query_only(1)")
	return q.Encode()
}

// fileURI is FileURI of path with one parameter of SQLite's (mode=ro,
// immutable=1), to which the caller appends "&" and the driver's.
func fileURI(path, param string) string {
	return FileURI(path, nil) + "?" + param
}

// walHasContent reports whether the -wal file beside live exists and is
// not empty: then live alone does not hold every commit.
func walHasContent(live string) bool {
	fi, err := os.Stat(live + "-wal")
	return err == nil && fi.Size() > 0
}
