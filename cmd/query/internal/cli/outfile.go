// --out FILE of query scan and query view run: checking the path before any
// row is read, and writing the file whole or not at all, never through a
// symlink and never over anything but a regular file.

package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/spf13/pflag"
)

// errOutExists is wrapped by the error of an --out path that is there
// already when --force was not given (code "exists"). Nothing was written.
var errOutExists = errors.New("output path exists")

// outExistsError is the error of errOutExists: its code is "exists".
type outExistsError struct{ path string }

func (e *outExistsError) Error() string {
	return fmt.Sprintf("--out %s is already there: give --force to replace a file", e.path)
}

// ErrorCode is the code recordstore.Code reports.
func (e *outExistsError) ErrorCode() string { return "exists" }

// Is makes errors.Is(err, errOutExists) hold.
func (e *outExistsError) Is(target error) bool { return target == errOutExists }

// outFlags are --out and --force.
type outFlags struct {
	path  string // "" (stdout, the default) or "-" (stdout) or a file
	force bool
}

func (o *outFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&o.path, "out", "", "write to this new file (whole or not at all) instead of stdout; - is stdout")
	fl.BoolVar(&o.force, "force", false, "let --out replace an existing regular file (never a symlink, device, FIFO or folder)")
}

// toStdout reports whether the output goes to stdout.
func (o *outFlags) toStdout() bool { return o.path == "" || o.path == "-" }

// check refuses an --out path that the export could not, or must not,
// write, before anything is read: a folder (invalid), a missing parent
// folder (not_found; it is not created), an existing path without --force
// (exists), and with --force anything but a regular file — a symlink (not
// followed), a device, a FIFO, a socket — (invalid). It changes nothing.
func (o *outFlags) check() error {
	if o.toStdout() {
		return nil
	}
	if err := checkOutDir(filepath.Dir(o.path)); err != nil {
		return err
	}
	fi, err := os.Lstat(o.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", o.path, err)
	}
	if fi.IsDir() {
		return recordstore.Invalidf("--out %s is a folder: name a file in it", o.path)
	}
	if !o.force {
		return &outExistsError{path: o.path}
	}
	if !fi.Mode().IsRegular() {
		return recordstore.Invalidf("--out %s is %s: --force replaces a regular file only", o.path, fileKind(fi.Mode()))
	}
	return nil
}

// checkOutDir refuses a parent folder that is not there (not_found) or is
// not a folder (invalid).
func checkOutDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return recordstore.Errorf(recordstore.ErrNotFound, "--out: folder %s does not exist", dir)
	}
	if err != nil {
		return fmt.Errorf("--out: folder %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return recordstore.Invalidf("--out: %s is not a folder", dir)
	}
	return nil
}

// fileKind names what a mode is, for an error message.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// write makes the output hold what fill writes: stdout as it goes, or a
// file whole or not at all. The file is written to a temp file in the same
// folder (0600, fsynced), then, with --force, renamed over the path (a
// regular file: check ran first), else linked to it, which fails if
// something appeared there meanwhile (exists); the folder is fsynced. On
// error the path holds what it held before and the temp file is removed
// (after a failed folder fsync the new file may not survive a crash).
func (o *outFlags) write(stdout io.Writer, fill func(io.Writer) error) error {
	if o.toStdout() {
		return fill(stdout)
	}
	if err := o.check(); err != nil { // again: the export took a while
		return err
	}
	if o.force {
		if err := fsutil.Default.WriteFileFunc(o.path, fsutil.FileMode, fill); err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
		return nil
	}
	return createOut(o.path, fill)
}

// outSeq numbers the temp files of this process.
var outSeq atomic.Uint64

// createOut writes a new file at path through a temp file that is linked
// to path, so that nothing at path is ever replaced.
func createOut(path string, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(outSeq.Add(1), 10))
	if err := fsutil.Default.CreateFile(tmp, fsutil.FileMode, fill); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return &outExistsError{path: path}
	} else if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("write %s: remove %s: %w", path, tmp, err)
	}
	return fsutil.SyncDir(dir)
}
