// The Backend type: opening the live file, the writer connection and the
// reader pool, the lifecycle guards every call passes, and Close.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// Options configures Open. The zero value is usable.
type Options struct {
	// Logger receives the backend's log lines; default: discard.
	Logger *slog.Logger
	// Now is the clock, injectable for retention tests; default time.Now.
	Now func() time.Time
	// SweepInterval is the retention sweeper's period; default 1 minute.
	// A negative value disables the background sweeper (Sweep still works).
	SweepInterval time.Duration
	// Swept, when set, is called after each run of the background sweeper
	// (not after a Sweep called directly, nor after a run Close cut
	// short): how long it took and its error. It must not block. Metrics
	// count sweeper runs with it.
	Swept func(took time.Duration, err error)
	// BusyTimeout is how long a connection waits for a lock held by
	// another connection or process; default 5s.
	BusyTimeout time.Duration
	// ReadConns is the size of the reader pool; default 4.
	ReadConns int
	// NoCheckpoint turns SQLite's automatic checkpoints off on the writer
	// connection (wal_autocheckpoint=0), for a live file whose WAL another
	// component checkpoints: a replicator that must read every WAL frame
	// before it is checkpointed away (owner.Options.Replica). The WAL then
	// grows until that component checkpoints it. The backend never
	// checkpoints explicitly; its last connection still checkpoints and
	// removes the WAL as it closes (SQLite's rule), which is why the owner
	// stops its replicator, after shipping, before it closes the backend.
	NoCheckpoint bool
	// BeforeCommit, when set, is called in every write transaction just
	// before its COMMIT: the last moment a writer that may have lost its
	// right to write (a lease across hosts, owner.Options.Fence) can
	// refuse. Its error rolls the transaction back — nothing of it is
	// stored — and is the write's error; the writer is not stopped (the
	// caller refuses every later commit the same way). It must be quick:
	// it runs with the write lock held. Every transaction of the backend
	// that writes a file calls it: the writes, the schema's at a writable
	// open or a promotion, and the seeding of Rotate's new file (a refused
	// rotation leaves the old file live; see Rotate).
	BeforeCommit func() error
	// BeforePromote, when set, is called by Promote before anything is
	// written, with the caller's right to write already taken (the
	// store's lock, and its lease across hosts). Its error fails Promote
	// and leaves the backend read-only. It may replace the live file (a
	// restore from the replica): Promote then refuses with ErrLiveFileGone,
	// as for any live file replaced under a read-only backend.
	BeforePromote func(ctx context.Context) error

	// ReadOnly opens an existing store without writing to it: only the
	// reader pool is opened, no sweeper runs, and every mutation is handed
	// to Submit (see the package documentation, "Read-only mode"). Open
	// fails with an error wrapping recordstore.ErrNotFound when the live
	// file does not exist. Promote makes the backend writable in place.
	ReadOnly bool
	// Submit applies a read-only backend's mutation, as one batch, through
	// the process that owns the store, and returns the ledger's result for
	// it. The backend fills Schemas and Entries; the submitter fills ID,
	// Producer and Created. Without Submit a read-only backend refuses
	// every mutation with recordstore.ErrReadOnly.
	Submit func(ctx context.Context, b recordstore.Batch) (recordstore.BatchResult, error)
	// ChangeInterval is how often WatchChanges polls the file's
	// data_version; default 100ms.
	ChangeInterval time.Duration
	// BeforeChangeProbe, when set, is called before each poll of the
	// file's data_version (WatchChanges, and a read-only backend's change
	// feed, where one poll answers every commit notice that arrived while
	// the previous one ran: see PollChanges), on the polling goroutine.
	// The poll waits for it; it must not call the backend. Metrics and
	// tests count the polls with it.
	BeforeChangeProbe func()
	// ReadOnlyFile, with ReadOnly, has SQLite itself open the live file
	// read-only (mode=ro), for a store this process must not or cannot
	// write: a copy or backup, or one in a folder it cannot write. When
	// that fails because the folder cannot be written (SQLite would need
	// to create the -shm file) and no -wal file with content lies beside
	// the live file, the file is opened immutable: everything committed is
	// in it, and nothing can write it meanwhile. Promote then refuses
	// with recordstore.ErrReadOnly. Without ReadOnly, Open refuses with
	// recordstore.ErrInvalid.
	ReadOnlyFile bool

	// LiveFile, when set, is the live file's path (made absolute) instead
	// of LivePath(path): a caller that names and rotates its live files
	// itself (see Rotate, Seal). Its folder is created 0700 when missing,
	// the file 0600. The lock, spool, state file and socket of the owner
	// package stay beside the store path.
	LiveFile string
	// CarryFrom lists earlier live files of the same store. When a
	// writable Open finds the live file without a ledger (a new file, or
	// one no batch was applied to yet), it copies into it, in the
	// transaction that creates its bookkeeping tables, the ledger rows of
	// each listed file that exists and still has a ledger, so that a batch
	// applied to one of them is never applied again (exactly-once across
	// files). Missing and sealed files are skipped; a file whose -wal
	// still holds commits (its owner died) is recovered by SQLite as it
	// is attached. The epoch continues above the highest carried one. The
	// catalog is not carried: the caller declares its kinds after Open.
	// At most MaxCarryFrom files; more is refused with ErrInvalid.
	CarryFrom []string
}

// MaxCarryFrom is how many files Options.CarryFrom may list (SQLite
// attaches them all at once, and attaches at most ten).
const MaxCarryFrom = 8

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Minute
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.ChangeInterval <= 0 {
		o.ChangeInterval = 100 * time.Millisecond
	}
	return o
}

// Backend is a record store in one SQLite file. It is safe for concurrent
// use; see the package documentation for how writes are serialized.
type Backend struct {
	path string // configured path P, absolute
	// live is the live file (LivePath(path), or Options.LiveFile); Rotate
	// changes it with life held exclusively. liveName is the same, for
	// LivePath, which does not enter.
	live     string
	liveName atomic.Pointer[string]
	// walSync keeps the live file's WAL open for Sync (write lock held).
	walSync *fsutil.KeptSync
	opts    Options
	log     *slog.Logger
	// takesHint is SetTakesHint's function, or nil.
	takesHint atomic.Pointer[func(stream, kind string) bool]

	// The writer (one connection, BEGIN IMMEDIATE) and its statements are
	// nil while the backend is read-only; Promote sets them with life held
	// exclusively. The reader pool (query_only connections) is always open.
	w  *sql.DB
	r  *sql.DB
	ws *writeStmts
	rs *readStmts

	// wsem admits one write transaction at a time (a channel rather than a
	// mutex so that waiting for it honours ctx).
	wsem chan struct{}
	// failed is the error that stopped the writer (an I/O error, or a
	// newer epoch); guarded by wsem.
	failed error
	// ledger holds the writer's ledger statements, prepared when the first
	// batch is applied; guarded by wsem.
	ledger *ledgerStmts
	// marks are the producers' ledger high-water marks as this writer
	// knows them (see producerMarks); guarded by wsem.
	marks producerMarks
	// txConn is the writer connection while inTxLocked runs a transaction
	// on it (nil otherwise), for the bulk inserts that reach the driver
	// directly (insertBulk); guarded by wsem.
	txConn *sql.Conn

	// life is held shared by every call for its whole duration and
	// exclusively by Close and Promote, so they wait for calls in flight
	// and no call starts on closed connections or sees half a promotion.
	life     sync.RWMutex
	closed   bool // guarded by life
	readOnly bool // guarded by life

	// epoch is the writer epoch this process last set (writable) or read.
	epoch atomic.Int64
	// ledgerSeen is set once the ledger table is known to exist.
	ledgerSeen atomic.Bool
	// schemaVersion is the file's schema_version when the read-only
	// catalog was last refreshed (used by the change feed goroutine only).
	schemaVersion int64
	// watch0 is the watcher a read-only Open makes before reading the
	// catalog, handed to the change feed when Open succeeds.
	watch0 *watcher
	// damage is the first error wrapping ErrCorrupt a call met (Damage).
	damage atomic.Pointer[error]
	// opened is the live file a read-only Open opened (see CheckLiveFile);
	// never changed after Open.
	opened os.FileInfo
	// immutable is set by a ReadOnlyFile open that fell back to SQLite's
	// immutable mode (see Options.ReadOnlyFile); never changed after Open.
	immutable bool

	tables   tableCache
	notifier *recordstore.Notifier
	// pushed is set while the owner's commit notices reach this
	// read-only backend (SetPushed): the change feed then polls less.
	pushed atomic.Bool

	// promoteMu serializes Promote calls.
	promoteMu sync.Mutex

	// Background goroutines (the sweeper, the read-only change feed): their
	// lifetime ctx is created in Open and cancelled by Close, which then
	// waits for them. bg guards starting one against Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	bg     struct {
		sync.Mutex
		stopping bool        // Close has begun: start nothing more
		feed     *feedHandle // the read-only change feed subscription, or nil
	}
}

var (
	_ recordstore.Backend       = (*Backend)(nil)
	_ recordstore.Sweeper       = (*Backend)(nil)
	_ recordstore.BatchAppender = (*Backend)(nil)
	_ recordstore.ChangeSource  = (*Backend)(nil)
)

// Open opens (creating if needed) the store configured at path: the live
// file LivePath(path) with its folders (0700) and file (0600). A path
// CheckFiles refuses is refused before anything is created. It creates
// the bookkeeping tables, checks the catalog version (ErrCatalogVersion),
// increments the epoch, loads the declared kinds and starts the retention
// sweeper. On error nothing is left open; the folders and an empty live
// file may have been created. A live file SQLite finds damaged fails with
// ErrCorrupt, naming the file, and is left as it is. Before SQLite opens
// the file, its -wal and -shm files are given the live file's mode (see
// matchSidecarModes); a live file, -wal, -shm or folder this process
// cannot write fails with an error wrapping recordstore.ErrReadOnly that
// names it (code read_only), with nothing written.
//
// With Options.ReadOnly it only opens an existing live file (an error
// wrapping recordstore.ErrNotFound otherwise) through the reader pool,
// checks the catalog version, reads the epoch, loads the kinds and follows
// the file's changes (see WatchChanges) to wake the Notifier; it writes
// nothing.
func Open(ctx context.Context, path string, opts Options) (*Backend, error) {
	abs, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	live, err := liveFile(abs, opts)
	if err != nil {
		return nil, err
	}
	if err := checkFiles(path, abs, live); err != nil {
		return nil, err
	}
	if opts.ReadOnlyFile && !opts.ReadOnly {
		return nil, recordstore.Invalidf("sqlite.Options.ReadOnlyFile needs ReadOnly")
	}
	if len(opts.CarryFrom) > MaxCarryFrom {
		return nil, recordstore.Invalidf("sqlite.Options.CarryFrom lists %d files, at most %d", len(opts.CarryFrom), MaxCarryFrom)
	}
	opts = opts.withDefaults()
	b := &Backend{
		path:     abs,
		live:     live,
		opts:     opts,
		log:      opts.Logger.With("component", "recordstore_sqlite"),
		wsem:     make(chan struct{}, 1),
		notifier: recordstore.NewNotifier(),
		readOnly: opts.ReadOnly,
	}
	b.liveName.Store(&live)
	b.tables.init()
	b.ctx, b.cancel = context.WithCancel(context.Background())
	open := b.open
	if opts.ReadOnly {
		open = b.openReadOnly
	}
	if err := open(ctx); err != nil {
		b.cancel()
		_ = b.tables.close()
		_ = b.closeDBs()
		b.corrupted(&err)
		if !opts.ReadOnly {
			b.unwritable(&err)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if opts.ReadOnly {
		b.startFeed(b.watch0)
		b.watch0 = nil
	} else {
		b.startSweeper()
	}
	b.log.Debug("opened", "live", b.live, "read_only", opts.ReadOnly, "epoch", b.epoch.Load())
	return b, nil
}

// open is Open's list of steps.
func (b *Backend) open(ctx context.Context) error {
	if err := createLive(b.live); err != nil {
		return err
	}
	b.matchSidecarModes()
	if err := b.openWriter(ctx); err != nil {
		return err
	}
	epoch, err := b.initSchemaCarrying(ctx)
	if err != nil {
		return err
	}
	b.epoch.Store(epoch)
	if err := fixModes(b.live); err != nil {
		return err
	}
	if err := b.openReaders(ctx); err != nil {
		return err
	}
	if b.ws, err = prepareWriteStmts(ctx, b.w); err != nil {
		return err
	}
	if b.rs, err = prepareReadStmts(ctx, b.r); err != nil {
		return err
	}
	return b.loadKinds(ctx)
}

func (b *Backend) openWriter(ctx context.Context) error {
	w, err := openWriterDB(ctx, b.live, b.opts.BusyTimeout, b.opts.NoCheckpoint)
	b.w = w
	return err
}

// openWriterDB opens the single writer connection of the file live and
// checks that it is in WAL mode; noCheckpoint turns its automatic
// checkpoints off (Options.NoCheckpoint). The *sql.DB is returned (to be closed)
// even with an error, once opened.
func openWriterDB(ctx context.Context, live string, busy time.Duration, noCheckpoint bool) (*sql.DB, error) {
	w, err := sql.Open("sqlite", writerDSN(live, busy, noCheckpoint))
	if err != nil {
		return nil, fmt.Errorf("open writer: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		return w, fmt.Errorf("open writer: %w", err)
	}
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return w, fmt.Errorf("read journal mode: %w", err)
	}
	if mode != "wal" {
		return w, fmt.Errorf("journal mode is %q, want wal", mode)
	}
	return w, nil
}

// closeWriter closes the writer's statements and connection (a failed
// Promote undoes itself with it).
func (b *Backend) closeWriter() {
	_ = b.ws.close()
	if b.w != nil {
		_ = b.w.Close()
	}
	b.w, b.ws = nil, nil
}

func (b *Backend) openReaders(ctx context.Context) error {
	r, err := b.openReaderDB(ctx, b.readerDSN())
	b.r = r
	return err
}

// openReaderDB opens a reader pool with the connection string dsn. The
// *sql.DB is returned (to be closed) even with an error, once opened.
func (b *Backend) openReaderDB(ctx context.Context, dsn string) (*sql.DB, error) {
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open readers: %w", err)
	}
	r.SetMaxOpenConns(b.opts.ReadConns)
	r.SetMaxIdleConns(b.opts.ReadConns)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	if err := r.PingContext(ctx); err != nil {
		return r, fmt.Errorf("open readers: %w", err)
	}
	return r, nil
}

// Path returns the configured store path (absolute).
func (b *Backend) Path() string { return b.path }

// LivePath returns the live file's path: LivePath(Path()), or
// Options.LiveFile, or the file the last Rotate switched to.
func (b *Backend) LivePath() string { return *b.liveName.Load() }

// Notifier returns the notifier woken after every commit.
func (b *Backend) Notifier() *recordstore.Notifier { return b.notifier }

// now returns the clock's time, truncated to the stored precision.
func (b *Backend) now() time.Time {
	return b.opts.Now().UTC().Truncate(time.Microsecond)
}

// enter admits a call: it returns ErrClosed after Close, else holds life
// shared until leave.
func (b *Backend) enter() error {
	b.life.RLock()
	if b.closed {
		b.life.RUnlock()
		return closedErr(b.path)
	}
	return nil
}

func (b *Backend) leave() { b.life.RUnlock() }

// Epoch returns the writer epoch this process last set (opening writable,
// Promote) or read (opening read-only, or following another process's
// changes). See the package documentation, "The epoch".
func (b *Backend) Epoch() int64 { return b.epoch.Load() }

// ReadOnly reports whether the backend is read-only (until Promote).
func (b *Backend) ReadOnly() bool {
	b.life.RLock()
	defer b.life.RUnlock()
	return b.readOnly
}

// startSweeper starts the background retention sweeper unless
// SweepInterval disables it or Close has begun.
func (b *Backend) startSweeper() {
	if b.opts.SweepInterval <= 0 {
		return
	}
	b.bg.Lock()
	defer b.bg.Unlock()
	if b.bg.stopping {
		return
	}
	b.wg.Add(1)
	go b.sweepLoop(b.opts.SweepInterval)
}

// Close stops the background goroutines, waits for calls in flight and
// closes both connection pools. It is idempotent; every later call returns
// ErrClosed. Committed writes are in the WAL and survive; nothing is lost
// by an error here.
func (b *Backend) Close() error {
	b.bg.Lock()
	b.bg.stopping = true
	b.bg.Unlock()
	b.cancel()
	b.wg.Wait()
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	err := errors.Join(b.tables.close(), b.ledger.close(), b.ws.close(), b.rs.close(), b.closeDBs(), b.closeWALSync())
	if err != nil {
		return fmt.Errorf("close store %s: %w", b.path, err)
	}
	return nil
}

func (b *Backend) closeDBs() error {
	var errs []error
	if b.r != nil {
		errs = append(errs, b.r.Close())
	}
	if b.w != nil {
		errs = append(errs, b.w.Close())
	}
	return errors.Join(errs...)
}
