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
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/fb46ecde/records/recordstore"
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
	// BusyTimeout is how long a connection waits for a lock held by
	// another connection or process; default 5s.
	BusyTimeout time.Duration
	// ReadConns is the size of the reader pool; default 4.
	ReadConns int
}

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
	return o
}

// Backend is a record store in one SQLite file. It is safe for concurrent
// use; see the package documentation for how writes are serialized.
type Backend struct {
	path string // configured path P, absolute
	live string // the live file, LivePath(path)
	opts Options
	log  *slog.Logger

	w  *sql.DB // the writer: one connection, BEGIN IMMEDIATE
	r  *sql.DB // the reader pool: query_only connections
	ws *writeStmts
	rs *readStmts

	// wsem admits one write transaction at a time (a channel rather than a
	// mutex so that waiting for it honours ctx).
	wsem chan struct{}
	// failed is the I/O error that stopped the writer; guarded by wsem.
	failed error

	// life is held shared by every call for its whole duration and
	// exclusively by Close, so Close waits for calls in flight and no call
	// starts on closed connections.
	life   sync.RWMutex
	closed bool // guarded by life

	tables   tableCache
	notifier *recordstore.Notifier

	// The sweeper's lifetime: created in Open, stopped and waited for in
	// Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var (
	_ recordstore.Backend = (*Backend)(nil)
	_ recordstore.Sweeper = (*Backend)(nil)
)

// Open opens (creating if needed) the store configured at path: the live
// file LivePath(path) with its folders (0700) and file (0600). It creates
// the bookkeeping tables, checks the catalog version (ErrCatalogVersion),
// loads the declared kinds and starts the retention sweeper. On error
// nothing is left open; the folders and an empty live file may have been
// created.
func Open(ctx context.Context, path string, opts Options) (*Backend, error) {
	abs, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	b := &Backend{
		path:     abs,
		live:     LivePath(abs),
		opts:     opts,
		log:      opts.Logger.With("component", "recordstore_sqlite"),
		wsem:     make(chan struct{}, 1),
		notifier: recordstore.NewNotifier(),
	}
	b.tables.init()
	if err := b.open(ctx); err != nil {
		b.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	if opts.SweepInterval > 0 {
		b.wg.Add(1)
		go b.sweepLoop(opts.SweepInterval)
	}
	b.log.Debug("opened", "live", b.live)
	return b, nil
}

// open is Open's list of steps.
func (b *Backend) open(ctx context.Context) error {
	if err := createLive(b.live); err != nil {
		return err
	}
	if err := b.openWriter(ctx); err != nil {
		return err
	}
	if err := initSchema(ctx, b.w); err != nil {
		return err
	}
	if err := fixModes(b.live); err != nil {
		return err
	}
	if err := b.openReaders(ctx); err != nil {
		return err
	}
	var err error
	if b.ws, err = prepareWriteStmts(ctx, b.w); err != nil {
		return err
	}
	if b.rs, err = prepareReadStmts(ctx, b.r); err != nil {
		return err
	}
	return b.loadKinds(ctx)
}

func (b *Backend) openWriter(ctx context.Context) error {
	w, err := sql.Open("sqlite", writerDSN(b.live, b.opts.BusyTimeout))
	if err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	b.w = w
	if err := w.PingContext(ctx); err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	return nil
}

func (b *Backend) openReaders(ctx context.Context) error {
	r, err := sql.Open("sqlite", readerDSN(b.live, b.opts.BusyTimeout))
	if err != nil {
		return fmt.Errorf("open readers: %w", err)
	}
	r.SetMaxOpenConns(b.opts.ReadConns)
	r.SetMaxIdleConns(b.opts.ReadConns)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	b.r = r
	if err := r.PingContext(ctx); err != nil {
		return fmt.Errorf("open readers: %w", err)
	}
	return nil
}

// Path returns the configured store path (absolute).
func (b *Backend) Path() string { return b.path }

// LivePath returns the live file's path.
func (b *Backend) LivePath() string { return b.live }

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

// Close stops the sweeper, waits for calls in flight and closes both
// connection pools. It is idempotent; every later call returns ErrClosed.
// Committed writes are in the WAL and survive; nothing is lost by an error
// here.
func (b *Backend) Close() error {
	b.cancel()
	b.wg.Wait()
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	err := errors.Join(b.tables.close(), b.ws.close(), b.rs.close(), b.closeDBs())
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
