// Package fsutil is the one durable-file helper of records: every file or
// folder that must survive a crash is made durable here, with the same
// steps in the same order — write a temp file, fsync it, close it, rename it
// into place, fsync the folder.
//
// It is public API, a small product of its own, not an internal helper
// that leaked: the engine (spool, sqlite, owner, fleet), the Drakkar layer
// (drakkar/...: the recorder's published files and its FS seam, the
// archive's lock and clock, the registry's cards, the merge's output, the
// meta files) and the query command's --out files all make files durable
// through it, and a program that keeps files of its own beside a store
// should too. Keeping it in one place is the point — a second copy of these
// steps is how a missed folder fsync creeps in — and recordstore/internal
// cannot be imported from drakkar/ or cmd/. Its contract, which changes
// only with a major version:
//
//   - What is durable when a call returns nil: the content written and the
//     folder entry it names, as each function says (CreateFile alone leaves
//     the folder entry to a later SyncDir or Rename, RenameNotify the source
//     folder, RewriteFiles the folder).
//   - What is on disk when a call fails: each function says, and none
//     leaves a temp or partial file of its own behind, except where it
//     says the rename already happened.
//   - Every failed fsync is reported wrapped in ErrSync (recordstore.ErrFsync
//     is the same error). Callers must treat it as fatal for the writer
//     that saw it: after a failed fsync the kernel may have dropped the
//     dirty pages and a retry can report success for data that is gone
//     ("fsyncgate", PostgreSQL 2018). Stop writing and recover by reopening.
//   - Files are created with the mode passed (FileMode, 0600, everywhere in
//     records), folders with DirMode (0700); existing folders keep theirs.
//   - A Helper is safe for concurrent use when its FS is (OS is); temp
//     names are unique per process and call. It takes no locks: two
//     writers of one path are the caller's to keep apart.
//   - It works on any POSIX file system that honours fsync on files and
//     folders; on Linux it also starts writeback early (sync_file_range) to
//     shorten the fsync that follows, a hint that makes nothing durable.
//
// FS is a small seam so tests can inject faults (a failed fsync, a
// rename refused); Default and the package-level functions use the real
// operating system (OS).
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// Modes the specs require for everything records creates.
const (
	FileMode os.FileMode = 0o600
	DirMode  os.FileMode = 0o700
)

// ErrSync wraps every fsync failure. It is fatal for the writer. Package
// recordstore re-exports it as recordstore.ErrFsync, the name users test
// for with errors.Is.
var ErrSync = errors.New("fsync failed")

// File is what the helper needs of an open file.
type File interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// FS is the set of file-system calls the helper makes. OS implements it
// with package os; tests wrap it to inject failures.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	Mkdir(name string, perm os.FileMode) error
	// SyncDir fsyncs a folder so that entries created, renamed or removed
	// in it are durable.
	SyncDir(dir string) error
}

// OS is the real file system.
type OS struct{}

// OpenFile opens a file with os.OpenFile. The File it returns implements
// WritebackStarter and DataSyncer.
func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// osFile is an *os.File that can start its writeback early.
type osFile struct{ *os.File }

// DataSyncer is implemented by a File that can flush its data and only
// the metadata needed to read that data back — the file's size and where
// its blocks are, not its times — which costs no inode write when the
// size did not change (fdatasync on Linux; a full fsync elsewhere).
// KeepDataSync uses it; a File without it is fsynced. A failure is a
// failed fsync: wrapped in ErrSync, fatal for the writer.
type DataSyncer interface {
	DataSync() error
}

// WritebackStarter is implemented by a File that can ask the kernel to
// start writing a range of its data to the disk without waiting for it, so
// that the Sync which follows has less left to wait for (sync_file_range
// on Linux; nothing elsewhere). It is a hint: it makes nothing durable and
// reports nothing, a failure shows in the Sync.
type WritebackStarter interface {
	StartWriteback(off, n int64)
}

// writebackEvery is how many bytes a Fill writes between two calls to
// StartWriteback.
const writebackEvery = 256 << 10

// fillWriter is the writer a Fill function writes into: it passes the
// bytes to the file, starting their writeback every writebackEvery bytes
// when the file can, so that writing to the disk overlaps the Fill's own
// work rather than all of it waiting for the fsync.
type fillWriter struct {
	f       File
	ws      WritebackStarter // nil when f cannot
	written int64            // bytes written through it
	started int64            // bytes whose writeback was started
}

func newFillWriter(f File) *fillWriter {
	ws, _ := f.(WritebackStarter)
	return &fillWriter{f: f, ws: ws}
}

func (w *fillWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.ws != nil && w.written-w.started >= writebackEvery {
		w.ws.StartWriteback(w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// Rename renames with os.Rename.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove removes with os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// Mkdir creates one folder with os.Mkdir.
func (OS) Mkdir(name string, perm os.FileMode) error { return os.Mkdir(name, perm) }

// SyncDir opens the folder and fsyncs it.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Helper performs durable writes through an FS.
type Helper struct {
	FS FS
}

// Default is the helper on the real file system.
var Default = &Helper{FS: OS{}}

var tempSeq atomic.Uint64

func syncErr(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrSync, what, err)
}

// WriteFile makes path hold exactly data, durably: it writes a temp file in
// the same folder, fsyncs and closes it, renames it over path and fsyncs the
// folder. On error path is unchanged (old content or absent) and the temp
// file has been removed, except after a failed folder fsync, when the
// rename may or may not survive a crash.
func (h *Helper) WriteFile(path string, data []byte, perm os.FileMode) error {
	return h.WriteFileFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileFunc is WriteFile with the content written by fill.
func (h *Helper) WriteFileFunc(path string, perm os.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(tempSeq.Add(1), 10))
	f, err := h.FS.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if err := h.fillAndSync(f, fill); err != nil {
		_ = h.FS.Remove(tmp)
		return err
	}
	if err := h.FS.Rename(tmp, path); err != nil {
		_ = h.FS.Remove(tmp)
		return fmt.Errorf("rename %s: %w", path, err)
	}
	if err := h.FS.SyncDir(dir); err != nil {
		return syncErr(dir, err)
	}
	return nil
}

func (h *Helper) fillAndSync(f File, fill func(io.Writer) error) error {
	if err := fill(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return syncErr(f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	return nil
}

// CreateFile writes a new file at path that must not exist yet (O_EXCL),
// fsyncs and closes it. The folder is not fsynced: use it for files inside
// a folder that is committed later by Rename (a spool batch), then call
// SyncDir or Rename. On error the partial file has been removed.
func (h *Helper) CreateFile(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := h.FS.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := h.fillAndSync(f, fill); err != nil {
		_ = h.FS.Remove(path)
		return err
	}
	return nil
}

// NamedData is one file for CreateFiles: its path and its whole content.
type NamedData struct {
	Path string
	Data []byte
	// Fill, when not nil, writes the content instead of Data, straight
	// into the open file (whose writeback to the disk is started every
	// 256 KiB as it writes, where the file system allows); CreateFiles
	// calls the Fill functions in order, each after the files before it
	// are written. Its error is returned as it is.
	Fill func(io.Writer) error
	// Prepared says the file exists already, empty, created beforehand by
	// the caller (so that creating it is off the caller's path): it is
	// opened without O_CREATE and truncated rather than created.
	Prepared bool
}

// CreateFiles writes new files (none may exist yet, except those marked
// Prepared, which must) into the folder dir and makes them and their
// folder entries durable: once every file is written, all the files and
// dir are fsynced at the same time, so a set of files costs about one
// fsync of latency. On error every file it opened (prepared ones too) has
// been removed, and the files after the failing one were not touched; a
// failed fsync is reported wrapped in ErrSync.
func (h *Helper) CreateFiles(dir string, files []NamedData, perm os.FileMode) error {
	return h.writeFiles(dir, files, perm)
}

// RewriteFiles writes files that all exist already (every one Prepared)
// and fsyncs them at the same time, but not their folder: use it only when
// the folder entries of exactly these files were made durable before (the
// files created, then SyncDir) and nothing was added to or removed from
// the folder since, so that the folder holds nothing an fsync would have
// to record. On error the files have been removed and the folder no
// longer holds what its last fsync recorded; a failed fsync is reported
// wrapped in ErrSync.
func (h *Helper) RewriteFiles(files []NamedData, perm os.FileMode) error {
	for _, nf := range files {
		if !nf.Prepared {
			return fmt.Errorf("rewrite %s: not a prepared file", nf.Path)
		}
	}
	return h.writeFiles("", files, perm)
}

// writeFiles is CreateFiles, with the folder fsync left out when dir is "".
func (h *Helper) writeFiles(dir string, files []NamedData, perm os.FileMode) (err error) {
	opened := make([]File, 0, len(files))
	unstarted := make([][2]int64, 0, len(files)) // per file: the bytes whose writeback is not started: {off, n}
	defer func() {
		if err != nil {
			for _, f := range opened {
				_ = f.Close()
				_ = h.FS.Remove(f.Name())
			}
		}
	}()
	for _, nf := range files {
		flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
		if nf.Prepared {
			flag = os.O_WRONLY | os.O_TRUNC
		}
		f, err := h.FS.OpenFile(nf.Path, flag, perm)
		if err != nil {
			return fmt.Errorf("create %s: %w", nf.Path, err)
		}
		opened = append(opened, f)
		if nf.Fill != nil {
			fw := newFillWriter(f)
			if err := nf.Fill(fw); err != nil {
				return err
			}
			unstarted = append(unstarted, [2]int64{fw.started, fw.written - fw.started})
		} else if _, err := f.Write(nf.Data); err != nil {
			return fmt.Errorf("write %s: %w", nf.Path, err)
		} else {
			unstarted = append(unstarted, [2]int64{0, int64(len(nf.Data))})
		}
	}
	if len(opened) > 1 {
		// Start every file's writeback before any fsync: the blocks of all
		// of them are then allocated in the journal transaction the first
		// fsync commits, and the fsyncs share it. Otherwise each fsync
		// allocates its own file's blocks, and a second commit often
		// follows the first (two small files took 1.8 times one; with
		// this, 1.5 times).
		for i, f := range opened {
			if ws, ok := f.(WritebackStarter); ok && unstarted[i][1] > 0 {
				ws.StartWriteback(unstarted[i][0], unstarted[i][1])
			}
		}
	}
	if err := h.syncAll(opened, dir); err != nil {
		return err
	}
	var cerr error
	for _, f := range opened {
		if err := f.Close(); err != nil && cerr == nil {
			cerr = fmt.Errorf("close %s: %w", f.Name(), err)
		}
	}
	if cerr != nil {
		for _, f := range opened {
			_ = h.FS.Remove(f.Name())
		}
		opened = nil // closed and removed: nothing left for the deferred cleanup
	}
	return cerr
}

// syncAll fsyncs the files and the folder dir (unless it is "") at the
// same time: the last of them on the calling goroutine, the others each
// on a goroutine of its own.
func (h *Helper) syncAll(files []File, dir string) error {
	n := len(files)
	if dir != "" {
		n++
	}
	errs := make([]error, n)
	sync1 := func(i int) {
		if i == len(files) {
			if err := h.FS.SyncDir(dir); err != nil {
				errs[i] = syncErr(dir, err)
			}
		} else if err := files[i].Sync(); err != nil {
			errs[i] = syncErr(files[i].Name(), err)
		}
	}
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sync1(i)
		}()
	}
	if n > 0 {
		sync1(n - 1)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Rename moves oldpath to newpath and fsyncs the destination folder (and
// the source folder when it differs, at the same time): once Rename returns
// nil the move, and the old name's removal, survive a crash. On a rename
// error nothing moved; on an fsync error (ErrSync) the move happened but
// may not survive a crash.
func (h *Helper) Rename(oldpath, newpath string) error {
	if err := h.FS.Rename(oldpath, newpath); err != nil {
		return fmt.Errorf("rename %s: %w", filepath.Base(oldpath), err)
	}
	dst, src := filepath.Dir(newpath), filepath.Dir(oldpath)
	if src == dst {
		return h.SyncDir(dst)
	}
	// The two folder fsyncs are independent: run them at the same time so
	// a cross-folder move costs one fsync of latency, not two.
	srcErr := make(chan error, 1)
	go func() { srcErr <- h.FS.SyncDir(src) }()
	derr := h.FS.SyncDir(dst)
	serr := <-srcErr
	if derr != nil {
		return syncErr(dst, derr)
	}
	if serr != nil {
		return syncErr(src, serr)
	}
	return nil
}

// RenameNotify commits a folder built in a scratch folder: it moves
// oldpath to newpath and fsyncs the destination folder only. When visible
// is not nil it is called right after the rename, on the caller's
// goroutine, while the fsync runs on another; RenameNotify returns once
// both are done. Another process may see newpath as soon as visible runs,
// though the move is durable only once RenameNotify returns nil. A
// goroutine that visible starts runs next on the caller's processor, ahead
// of the fsync, which is what a caller that asks another process about
// newpath wants.
//
// Unlike Rename it leaves the source folder unsynced: after a crash the
// new name is there, and on a file system that does not journal a rename
// as one operation the old name might come back beside it. Use it only
// where such a leftover is harmless — the spool's tmp/ is never read and
// is garbage-collected — and save the second fsync.
func (h *Helper) RenameNotify(oldpath, newpath string, visible func()) error {
	if err := h.FS.Rename(oldpath, newpath); err != nil {
		return fmt.Errorf("rename %s: %w", filepath.Base(oldpath), err)
	}
	dst := filepath.Dir(newpath)
	if visible == nil {
		return h.SyncDir(dst)
	}
	synced := make(chan error, 1)
	go func() { synced <- h.SyncDir(dst) }()
	visible()
	return <-synced
}

// SyncDir fsyncs a folder, reporting failure wrapped in ErrSync.
func (h *Helper) SyncDir(dir string) error {
	if err := h.FS.SyncDir(dir); err != nil {
		return syncErr(dir, err)
	}
	return nil
}

// SyncFile fsyncs an existing file that something else wrote (SQLite's
// WAL, for example), so that what was written to it survives a power loss.
// An open error is returned as it is (errors.Is fs.ErrNotExist for a
// missing file); a failed fsync is wrapped in ErrSync.
func (h *Helper) SyncFile(path string) error {
	f, err := h.FS.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil && cerr != nil {
		return fmt.Errorf("close %s: %w", path, cerr)
	}
	if err != nil {
		return syncErr(path, err)
	}
	return nil
}

// MkdirAll creates dir and any missing parents with DirMode, fsyncing each
// parent in which it created an entry, so the folders survive a crash.
// Existing folders keep their mode.
func (h *Helper) MkdirAll(dir string) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mkdir %s: not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := h.MkdirAll(parent); err != nil {
			return err
		}
	}
	if err := h.FS.Mkdir(dir, DirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	return h.SyncDir(parent)
}

// Package-level shorthands on Default.

// WriteFile is Default.WriteFile.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Default.WriteFile(path, data, perm)
}

// SyncFile is Default.SyncFile.
func SyncFile(path string) error { return Default.SyncFile(path) }

// MkdirAll is Default.MkdirAll.
func MkdirAll(dir string) error { return Default.MkdirAll(dir) }

// Rename is Default.Rename.
func Rename(oldpath, newpath string) error { return Default.Rename(oldpath, newpath) }

// SyncDir is Default.SyncDir.
func SyncDir(dir string) error { return Default.SyncDir(dir) }
