// Open: the owner election over the SQLite backend (or the submit-only
// one) for one store path, with every caller's options in one struct.

package records

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
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

// Options configure Open. The zero value is usable: a store whose live file
// is sqlite.LivePath(path), whose non-owners read it and take it over when
// its owner goes away.
type Options struct {
	// Owner configures the owner election, the spool and the owner's
	// loops: Logger, Build, Format, StartWait, DrainOnClose, Heartbeat,
	// Events, Metrics, Failpoint, Spool, LedgerRetention, NoPromotion,
	// DeferElection, and every option the owner package gains later, which
	// is passed on as it is. Path, Open, OpenDetached, CatalogVersion and
	// ReadOnly are Open's own: a value set in one of them is refused with
	// recordstore.ErrInvalid (use Options.ReadOnly). Owner.Logger also
	// receives the SQLite backend's lines, and Owner.Metrics.Swept is
	// wired to its retention sweeper.
	Owner OwnerOptions

	// SweepInterval is the retention sweeper's period while this process
	// owns the store (sqlite.Options.SweepInterval: default 1m; negative
	// disables it).
	SweepInterval time.Duration
	// ChangeInterval is how often a non-owner looks for the owner's
	// commits to wake its followers (Notifier, Tail; default 100ms) while
	// the owner's commit notices do not reach it; while they do, a
	// follower in another process sees an append at once (about a
	// millisecond), and the non-owner looks only every ten intervals, as
	// a safety net (see the owner's push, docs/multi-process.md).
	ChangeInterval time.Duration
	// ReadConns is the size of the SQLite backend's reader pool (default
	// 4).
	ReadConns int
	// BusyTimeout is how long a SQLite connection waits for a lock held by
	// another connection or process (default 5s).
	BusyTimeout time.Duration
	// LiveFile, when set, is the live file's path instead of
	// sqlite.LivePath(path) (sqlite.Options.LiveFile): the lock, state
	// file, socket and spool stay beside path.
	LiveFile string
	// NameLive, when set, names the live file and lists the earlier files
	// whose ledger it carries (sqlite.Options.LiveFile and CarryFrom) each
	// time this process opens the backend writable — as the owner, after
	// it took the store's lock, so that no other process of the store
	// creates or seals a file meanwhile. Its error fails that open. For a
	// caller that names and rotates its live files (see Store.Rotate); not
	// with LiveFile or ReadOnly.
	NameLive func() (live string, carryFrom []string, err error)
	// SubmitOnly, when set, is why a process that does not own the store
	// cannot read it: a non-owner opens a submit-only backend
	// (submitonly.Backend) whose reads fail with an error wrapping it and
	// whose writes go through the spool, instead of the SQLite backend
	// read-only. For a store whose owner alone opens the live file; it
	// needs Owner.NoPromotion (a submit-only backend cannot be promoted in
	// place) and is refused with Owner.DeferElection.
	SubmitOnly error
	// WrapSubmitOnly, when set, is applied to every submit-only backend
	// Open opens (a non-owner's with SubmitOnly, a detached process's): the
	// Store holds what it returns. The Drakkar recorder answers a batch's
	// outcome from the ledgers of its folder this way.
	WrapSubmitOnly func(*submitonly.Backend) Backend

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
	// CatchUp, when set with Owner.Fence, brings the live file to the
	// replica's newest state before this process writes it as the
	// store's new owner (replica.CatchUp; the CLI's --lease passes it).
	// With leased set it is called after the store's lock and lease were
	// taken and before anything is written — at Open (before the backend
	// opens writable) and at a promotion (sqlite.Options.BeforePromote)
	// — and it may restore the replica over the live file, or refuse;
	// its error fails that open or promotion. A promotion whose catch-up
	// replaced the live file is refused as for any live file replaced
	// under a read-only backend (sqlite.ErrLiveFileGone): the process
	// stops taking part and the store is reopened on the restored file.
	// With leased unset it is called, holding neither, when the live file
	// is missing at the open of a non-owner (another host holds the
	// lease): it may restore a copy to read until this process takes the
	// lease (the catch-up at that promotion decides again).
	CatchUp func(ctx context.Context, live string, leased bool) error
}

// Open opens the store configured at path (for example
// data/records.sqlite; the live file is data/v1/records.sqlite unless
// Options.LiveFile or Options.NameLive names another). See owner.Open for
// the roles and what is on disk when it fails. A process whose store is
// owned by a build with another catalog version opens detached
// (owner.RoleDetached): its writes go through the spool, its reads fail
// with *owner.CatalogVersionError. (A store opened with
// Owner.DeferElection whose backend opens read-only runs its election at
// its first write instead, and that write fails so; see
// owner.Options.DeferElection.)
//
// Refused before anything is created: Options that contradict each other
// or set a field of Owner that Open sets, a path the SQLite backend would
// refuse (sqlite.CheckPath), a path or live file that is a directory or a
// device (sqlite.CheckFilesAt), or a Format no codec is registered for,
// all with recordstore.ErrInvalid; with MustExist or ReadOnly a path with
// no store, with recordstore.ErrNotFound. See Options.ReadOnly and
// Options.ReadOnlyFallback for opening without writing.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if err := sqlite.CheckFilesAt(path, opts.LiveFile); err != nil {
		return nil, err
	}
	if opts.MustExist || opts.ReadOnly {
		if err := mustExist(path, opts); err != nil {
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

// check refuses Options that set a field Open sets itself, or that
// contradict each other.
func (o Options) check() error {
	own := o.Owner
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Path", own.Path != ""},
		{"Open", own.Open != nil},
		{"OpenDetached", own.OpenDetached != nil},
		{"CatalogVersion", own.CatalogVersion != 0},
		{"ReadOnly", own.ReadOnly},
	} {
		if f.set {
			return recordstore.Invalidf("records.Options.Owner.%s is set by records.Open; leave it zero", f.name)
		}
	}
	switch {
	case o.NameLive != nil && o.LiveFile != "":
		return recordstore.Invalidf("records.Options: NameLive and LiveFile cannot be used together")
	case o.NameLive != nil && o.ReadOnly:
		return recordstore.Invalidf("records.Options: NameLive cannot be used with ReadOnly (no live file is named without the election)")
	case o.SubmitOnly != nil && !own.NoPromotion:
		return recordstore.Invalidf("records.Options: SubmitOnly needs Owner.NoPromotion (a submit-only backend cannot be promoted)")
	case o.SubmitOnly != nil && own.DeferElection:
		return recordstore.Invalidf("records.Options: SubmitOnly cannot be used with Owner.DeferElection")
	case o.CatchUp != nil && own.Fence == nil:
		return recordstore.Invalidf("records.Options: CatchUp needs Owner.Fence (a catch-up is only safe under the store's lease)")
	}
	return nil
}

// livePath is the live file a process that does not open it names
// (submitonly.Options.LivePath): LiveFile, sqlite.LivePath(path), or
// nothing while NameLive names it.
func (o Options) livePath(path string) string {
	switch {
	case o.LiveFile != "":
		return o.LiveFile
	case o.NameLive != nil:
		return ""
	}
	return sqlite.LivePath(path)
}

// mustExist refuses a path where no store was ever opened: neither its
// live file nor its lock file (which every open through the election
// creates first, also one by a build of another catalog version) exists.
func mustExist(path string, opts Options) error {
	for _, p := range []string{opts.livePath(path), owner.PathsFor(path).Lock} {
		if p == "" {
			continue
		}
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
	if opts.Owner.Logger != nil {
		return opts.Owner.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// openOwner opens the store through owner.Open, read-only (no election)
// when readOnly is set.
func openOwner(ctx context.Context, path string, opts Options, readOnly bool) (*Store, error) {
	oo := opts.Owner
	oo.Path = path
	oo.CatalogVersion = sqlite.CatalogVersion
	oo.ReadOnly = readOnly
	oo.Open = func(ctx context.Context, ro bool, submit owner.Submitter) (Backend, error) {
		if ro && !readOnly && opts.SubmitOnly != nil {
			return openSubmitOnly(path, opts, opts.SubmitOnly, submit)
		}
		return openSQLite(ctx, path, opts, sqlite.Options{ReadOnly: ro, ReadOnlyFile: readOnly, Submit: submit})
	}
	// A build with another catalog version than the owner's writes
	// through the spool and fails its reads with the cause.
	oo.OpenDetached = func(_ context.Context, submit owner.Submitter, cause error) (Backend, error) {
		return openSubmitOnly(path, opts, cause, submit)
	}
	return owner.Open(ctx, oo)
}

// openSQLite opens the SQLite backend with role's ReadOnly, ReadOnlyFile
// and Submit, the rest from opts; a writable open names its live file
// with NameLive when set.
func openSQLite(ctx context.Context, path string, opts Options, role sqlite.Options) (Backend, error) {
	so := role
	so.Logger = opts.Owner.Logger
	so.SweepInterval = opts.SweepInterval
	so.Swept = opts.Owner.Metrics.Swept
	so.ChangeInterval = opts.ChangeInterval
	so.ReadConns = opts.ReadConns
	so.BusyTimeout = opts.BusyTimeout
	so.LiveFile = opts.LiveFile
	// A replicated store's checkpoints are the replicator's: it must see
	// every WAL frame before a checkpoint moves it into the file.
	so.NoCheckpoint = opts.Owner.Replica != nil
	// A fenced owner checks its lease at the commit itself too, so that
	// no write of the backend (the retention sweeper's included) commits
	// once the lease is lost.
	if f := opts.Owner.Fence; f != nil {
		so.BeforeCommit = func() error {
			if err := f.Check(); err != nil {
				return &owner.FencedError{Err: err}
			}
			return nil
		}
	}
	if !role.ReadOnly && opts.NameLive != nil {
		live, carry, err := opts.NameLive()
		if err != nil {
			return nil, err
		}
		so.LiveFile, so.CarryFrom = live, carry
	}
	if c := opts.CatchUp; c != nil && opts.Owner.Fence != nil && !role.ReadOnlyFile {
		live := so.LiveFile
		if live == "" {
			live = sqlite.LivePath(path)
		}
		switch {
		case !role.ReadOnly:
			if err := c(ctx, live, true); err != nil {
				return nil, err
			}
		default:
			if _, err := os.Lstat(live); errors.Is(err, fs.ErrNotExist) {
				if err := c(ctx, live, false); err != nil {
					return nil, err
				}
			}
			so.BeforePromote = func(ctx context.Context) error { return c(ctx, live, true) }
		}
	}
	b, err := sqlite.Open(ctx, path, so)
	if err != nil {
		return nil, err // not a nil *sqlite.Backend in a non-nil Backend
	}
	return b, nil
}

// openSubmitOnly opens the submit-only backend whose reads fail with
// cause and whose writes go to submit, wrapped by WrapSubmitOnly.
func openSubmitOnly(path string, opts Options, cause error, submit owner.Submitter) (Backend, error) {
	b, err := submitonly.Open(path, submitonly.Options{
		Cause:     cause,
		Submit:    submit,
		CheckKind: func(k recordstore.Kind) error { return sqlite.CheckKindName(k.Name) },
		LivePath:  opts.livePath(path),
	})
	if err != nil {
		return nil, err // not a nil *submitonly.Backend in a non-nil Backend
	}
	if opts.WrapSubmitOnly != nil {
		return opts.WrapSubmitOnly(b), nil
	}
	return b, nil
}
