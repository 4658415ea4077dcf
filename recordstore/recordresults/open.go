// Open: owner election over the SQLite backend for one store path.

package recordresults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"

	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // read Parquet batches
)

// Store is a store opened by Open: the owner package's Store over a
// Backend, under the name to use for it.
type Store = owner.Store[Backend]

// Writer is the role-aware bulk writer of a Store (Store.NewWriter); not
// to be confused with spool.Writer, which it is built on.
type Writer = owner.Writer[Backend]

// Backend is what a Store opened by Open holds (Store.Backend): a
// *sqlite.Backend, writable for the owner and read-only for the other
// processes, or, in a process detached from the store's catalog
// (owner.RoleDetached), a *submitonly.Backend whose reads fail with
// *owner.CatalogVersionError. Either checks a write locally and prepares
// its batch (owner.Preparer, owner.SourceAppender, CheckDeclare), so that
// the Store's one-call writes publish it.
type Backend interface {
	owner.Target
	owner.Preparer
	owner.SourceAppender
	recordstore.ChangeSource
	recordstore.Sweeper
	// CheckDeclare checks k as DeclareKind would, without declaring it,
	// and says what declaring it would do.
	CheckDeclare(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error)
	// ReadOnly reports whether the backend does not write the store
	// itself (every process but the owner).
	ReadOnly() bool
}

// Options configure Open. The zero value is usable.
type Options struct {
	// Logger receives the store's log lines; default: discard.
	Logger *slog.Logger
	// Build names this build in the state file and spool manifests.
	Build string
	// Format is the codec of batches this process spools as a non-owner:
	// "ndjson" (default), "ndjson.gz" or "parquet".
	Format string
	// StartWait bounds a non-owner's wait for the owner to be ready
	// (default 60s).
	StartWait time.Duration
	// DrainOnClose bounds the owner's final drain (default 10s).
	DrainOnClose time.Duration
	// SweepInterval is the retention sweeper's period while this process
	// owns the store (default 1m; negative disables it).
	SweepInterval time.Duration
	// Heartbeat is the owner's state refresh period (default 5s).
	Heartbeat time.Duration
	// ChangeInterval is how often a non-owner looks for the owner's
	// commits to wake its followers (Notifier, Tail; default 100ms) while
	// the owner's commit notices do not reach it; while they do, a
	// follower in another process sees an append at once (about a
	// millisecond), and the non-owner looks only every ten intervals, as
	// a safety net (see owner's push, docs/multi-process.md).
	ChangeInterval time.Duration
	// Events are the owner's callbacks (role changes, batches).
	Events owner.Events
	// Metrics are the owner's measurement hooks (owner.Metrics); its
	// Swept hook is wired to the SQLite backend's retention sweeper.
	// recordstore/ownermetrics makes them Prometheus metrics.
	Metrics owner.Metrics
	// Failpoint is called at the owner's named points (crash tests).
	Failpoint func(name string)
	// Spool configures the spool folder (limits, failpoints).
	Spool spool.Options

	// MustExist refuses, with an error wrapping recordstore.ErrNotFound
	// ("no store at PATH"), a path where no store was ever opened (neither
	// its live file nor its lock file exists), before anything is
	// created: what a process that only reads asks for, so that a
	// mistyped path is not made into an empty store.
	MustExist bool
	// ReadOnly opens the store read-only without taking part in the owner
	// election (owner.Options.ReadOnly, sqlite.Options.ReadOnlyFile): no
	// lock is taken, nothing is created or written — not the state file,
	// not the spool, not SQLite's -shm when the folder cannot be written —
	// and every write fails with recordstore.ErrReadOnly (code
	// read_only). The store must exist (as with MustExist). This reads a
	// copy or backup of a store, or a store in a folder or on a disk this
	// process cannot write. While another process owns the store, the
	// reads see its commits as a non-owner's do; the spool is not
	// ingested.
	ReadOnly bool
	// ReadOnlyFallback opens the store as ReadOnly does when opening it
	// through the election fails because a file or folder of the store
	// cannot be written (permission, read-only file system, full disk or
	// quota; see Unwritable), and logs why at warn. For a process that
	// only reads.
	ReadOnlyFallback bool
}

// Open opens the store configured at path (for example
// data/records.sqlite; the live file is data/v1/records.sqlite). See
// owner.Open for the roles and what is on disk when it fails. A process
// whose store is owned by a build with another catalog version opens
// detached (owner.RoleDetached): its writes go through the spool, its reads
// fail with *owner.CatalogVersionError. A path the SQLite backend would
// refuse (sqlite.CheckPath), or a Format no codec is registered for, is
// refused before anything is created.
//
// A path that is, or whose live file is, a directory or a device is
// refused with recordstore.ErrInvalid (sqlite.CheckFiles); with MustExist
// or ReadOnly a path with no store, with recordstore.ErrNotFound. Both
// before anything is created. See Options.ReadOnly and
// Options.ReadOnlyFallback for opening without writing.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := sqlite.CheckFiles(path); err != nil {
		return nil, err
	}
	if opts.MustExist || opts.ReadOnly {
		if err := mustExist(path); err != nil {
			return nil, err
		}
	}
	if opts.ReadOnly {
		return openOwner(ctx, path, opts, true)
	}
	st, err := openOwner(ctx, path, opts, false)
	if err == nil || !opts.ReadOnlyFallback || !Unwritable(err) {
		return st, err
	}
	st, roErr := openOwner(ctx, path, opts, true)
	if roErr != nil {
		return nil, fmt.Errorf("%w; and opening it read-only failed: %w", err, roErr)
	}
	logger(opts).Warn("opened read-only: the store cannot be written here", "store", path, "err", err)
	return st, nil
}

// mustExist refuses a path where no store was ever opened: neither its
// live file nor its lock file (which every open through the election
// creates first, also one by a build of another catalog version) exists.
func mustExist(path string) error {
	for _, p := range []string{sqlite.LivePath(path), owner.PathsFor(path).Lock} {
		if _, err := os.Lstat(p); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("look for a store at %s: %w", path, err)
		}
	}
	return recordstore.Errorf(recordstore.ErrNotFound, "no store at %s", path)
}

// Unwritable reports whether err says that a file or folder of the store
// cannot be written: permission denied, a read-only file system, no space
// or quota left, or a live file SQLite cannot write (recordstore.ErrReadOnly).
func Unwritable(err error) bool {
	if errors.Is(err, recordstore.ErrReadOnly) || errors.Is(err, fs.ErrPermission) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.ENOSPC, syscall.EDQUOT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

func logger(opts Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// openOwner opens the store through owner.Open, read-only (no election)
// when readOnly is set.
func openOwner(ctx context.Context, path string, opts Options, readOnly bool) (*Store, error) {
	return owner.Open(ctx, owner.Options[Backend]{
		ReadOnly:       readOnly,
		Path:           path,
		CatalogVersion: sqlite.CatalogVersion,
		Build:          opts.Build,
		Format:         opts.Format,
		StartWait:      opts.StartWait,
		DrainOnClose:   opts.DrainOnClose,
		Heartbeat:      opts.Heartbeat,
		Logger:         opts.Logger,
		Events:         opts.Events,
		Metrics:        opts.Metrics,
		Failpoint:      opts.Failpoint,
		Spool:          opts.Spool,
		Open: func(ctx context.Context, ro bool, submit owner.Submitter) (Backend, error) {
			b, err := sqlite.Open(ctx, path, sqlite.Options{
				Logger:         opts.Logger,
				SweepInterval:  opts.SweepInterval,
				Swept:          opts.Metrics.Swept,
				ChangeInterval: opts.ChangeInterval,
				ReadOnly:       ro,
				ReadOnlyFile:   readOnly,
				Submit:         submit,
			})
			if err != nil {
				return nil, err // not a nil *sqlite.Backend in a non-nil Backend
			}
			return b, nil
		},
		// A build with another catalog version than the owner's writes
		// through the spool and fails its reads with the cause.
		OpenDetached: func(_ context.Context, submit owner.Submitter, cause error) (Backend, error) {
			b, err := submitonly.Open(path, submitonly.Options{
				Cause:     cause,
				Submit:    submit,
				CheckKind: func(k recordstore.Kind) error { return sqlite.CheckKindName(k.Name) },
				LivePath:  sqlite.LivePath(path),
			})
			if err != nil {
				return nil, err
			}
			return b, nil
		},
	})
}

var (
	_ Backend = (*sqlite.Backend)(nil)
	_ Backend = (*submitonly.Backend)(nil)
)
