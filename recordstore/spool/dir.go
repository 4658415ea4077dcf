// The spool folder beside a store: P.spool/{tmp,incoming,failed,trash},
// opening it and listing its batches.

package spool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/internal/seams"
)

// State is one of the spool's folders.
type State string

// The spool folders.
const (
	// StateTmp holds batches being written: tmp/<instance>-<id>/. Never
	// listed; removed by GC after TmpAge.
	StateTmp State = "tmp"
	// StateIncoming holds committed batches waiting for the owner.
	StateIncoming State = "incoming"
	// StateFailed holds batches the owner refused, each with error.json.
	StateFailed State = "failed"
	// StateTrash holds ingested batches until GC removes them.
	StateTrash State = "trash"
)

var states = []State{StateTmp, StateIncoming, StateFailed, StateTrash}

// SpoolSuffix is appended to a store's configured path to name its spool.
const SpoolSuffix = ".spool"

// PathFor returns the spool folder of the store configured at storePath.
func PathFor(storePath string) string { return storePath + SpoolSuffix }

// DefaultLimits bound what Load and Folder readers accept when Options
// leaves Limits at zero: rows per batch and decoded bytes per data file.
// They are well above what a Writer cuts (50 000 rows, 64 MiB) so that a
// single large Append still loads, and low enough that a hostile file
// cannot exhaust memory.
var DefaultLimits = Limits{MaxRows: 1_000_000, MaxBytes: 256 << 20}

// Options configure a Dir. The zero value is ready to use.
type Options struct {
	// Logger receives debug events; nil discards them.
	Logger *slog.Logger
	// Now is the clock (GC ages, batch creation); nil means time.Now.
	Now func() time.Time
	// Failpoint, when set, is called with each publish step name (see
	// StepTmpCreated and the others) as the step completes. Crash tests
	// kill the process there.
	Failpoint func(step string)
	// Limits bound what loaded batches may hold. A zero field takes the
	// value of DefaultLimits; a negative one means unlimited.
	Limits Limits
	// Prepare makes the Dir keep one empty batch folder ready in tmp/
	// after each publish, for the next one (see Dir.Close): a long-lived
	// producer's publish then skips a mkdir and two file creations. A
	// process killed with one ready leaves it to tmp/ GC.
	Prepare bool

	// fs is the durable-file helper; nil means fsutil.Default. Only tests
	// set it, to inject faults: through seams.SetSpoolFS, or WithFS of
	// this package's own tests.
	fs *fsutil.Helper
}

func init() {
	seams.SetSpoolFS = func(opts any, h *fsutil.Helper) { opts.(*Options).fs = h }
}

// Dir is an open spool folder. It is safe for concurrent use; the
// folders themselves may be shared by many processes (see the package
// documentation for who may do what).
type Dir struct {
	root      string
	fs        *fsutil.Helper
	log       *slog.Logger
	now       func() time.Time
	failpoint func(string)
	limits    Limits
	prepare   bool
	prep      preparer
}

// Open opens (creating it if needed) the spool of the store configured at
// storePath: storePath + ".spool".
func Open(ctx context.Context, storePath string, opts Options) (*Dir, error) {
	return OpenRoot(ctx, PathFor(storePath), opts)
}

// OpenRoot opens (creating it if needed) the spool folder root and its
// four sub-folders, durably, with mode 0700. Existing folders keep their
// mode.
func OpenRoot(ctx context.Context, root string, opts Options) (*Dir, error) {
	d := &Dir{root: filepath.Clean(root), fs: opts.fs, log: opts.Logger, now: opts.Now,
		failpoint: opts.Failpoint, limits: effectiveLimits(opts.Limits), prepare: opts.Prepare}
	if d.fs == nil {
		d.fs = fsutil.Default
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	if err := d.makeFolders(ctx); err != nil {
		return nil, fmt.Errorf("open spool %s: %w", d.root, err)
	}
	return d, nil
}

// makeFolders makes the root (durably, through fsutil.MkdirAll) and those
// of its four sub-folders that are missing, then fsyncs the root once when
// it made any: one fsync makes all four entries durable, where a MkdirAll
// of each fsynced the root four times. Nothing uses a sub-folder before
// OpenRoot returns, so it is durable before anything depends on it. An
// existing sub-folder is not fsynced again (as fsutil.MkdirAll does not).
// On error the folders made so far are left, empty.
func (d *Dir) makeFolders(ctx context.Context) error {
	if err := d.fs.MkdirAll(d.root); err != nil {
		return err
	}
	made := false
	for _, s := range states {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := d.folder(s)
		if fi, err := os.Stat(dir); err == nil { // a stat is cheaper than a mkdir that fails
			if !fi.IsDir() {
				return fmt.Errorf("mkdir %s: not a directory", dir)
			}
			continue
		}
		err := d.fs.FS.Mkdir(dir, fsutil.DirMode)
		if err == nil {
			made = true
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			return fmt.Errorf("mkdir %s: not a directory", dir)
		}
	}
	if made {
		return d.fs.SyncDir(d.root)
	}
	return nil
}

func effectiveLimits(l Limits) Limits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Limits{MaxRows: pick(l.MaxRows, DefaultLimits.MaxRows), MaxBytes: pick(l.MaxBytes, DefaultLimits.MaxBytes)}
}

// Root returns the spool folder.
func (d *Dir) Root() string { return d.root }

// Limits returns the limits loaded batches are held to (0 = unlimited).
func (d *Dir) Limits() Limits { return d.limits }

func (d *Dir) folder(s State) string { return filepath.Join(d.root, string(s)) }

// Path returns the path of entry name in folder s.
func (d *Dir) Path(s State, name string) string { return filepath.Join(d.folder(s), name) }

func (d *Dir) fail(step string) {
	if d.failpoint != nil {
		d.failpoint(step)
	}
}

// List returns the batches of folder s (incoming, failed or trash),
// oldest first (by created time, then instance, seq and id — the name
// order). Entries whose names are not batch names are left out (see
// Strays). Listing tmp is refused: its batches are not committed.
func (d *Dir) List(ctx context.Context, s State) ([]BatchName, error) {
	names, err := d.readNames(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]BatchName, 0, len(names))
	for _, n := range names {
		if b, err := ParseBatchName(n); err == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// Strays returns the entries of folder s whose names are not batch names
// (leftovers of foreign tools, editors, a crash of another program). The
// owner moves those of incoming to failed so that they are seen.
func (d *Dir) Strays(ctx context.Context, s State) ([]string, error) {
	names, err := d.readNames(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if _, err := ParseBatchName(n); err != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

func (d *Dir) readNames(ctx context.Context, s State) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s != StateIncoming && s != StateFailed && s != StateTrash {
		return nil, recordstore.Invalidf("spool: cannot list folder %q (want incoming, failed or trash)", s)
	}
	// The names alone, sorted here: the owner lists incoming/ at every
	// drain, and building os.ReadDir's entries (sorted as interfaces) made
	// a List about a fifth slower (BenchmarkList).
	f, err := os.Open(d.folder(s))
	if err != nil {
		return nil, fmt.Errorf("list spool %s: %w", s, err)
	}
	names, err := f.Readdirnames(-1)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("list spool %s: %w", s, err)
	}
	slices.Sort(names)
	return names, nil
}

// checkEntryName refuses a name that is not one entry of a spool folder.
func checkEntryName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return recordstore.Errorf(ErrUnsafePath, "%s is not a spool entry name", recordstore.Quote(name))
	}
	return nil
}

// exists reports whether path exists (without following a symlink).
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
