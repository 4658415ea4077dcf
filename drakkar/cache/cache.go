// The Cache: one worker's LWW cache on the engine — Open, Get, Set,
// Delete, Close — with the worker's store owned through the flock
// election, as the recorder owns its own.

package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
)

// Options configure Open beyond Config. The zero value is usable.
type Options struct {
	// Logger receives the cache's log events; default: discard.
	Logger *slog.Logger
	// Registerer, when set, has the drakkar_cache_* metrics registered.
	Registerer prometheus.Registerer
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Peers lists the fleet's workers for the pull (a *registry.Registry);
	// nil: nothing is pulled.
	Peers PeerLister
	// HTTPClient makes the pull's requests; default a client with a 10 s
	// timeout.
	HTTPClient HTTPDoer
	// ExchangeTimeout bounds the read of one page the route serves; 5 s
	// (the spec's) by default.
	ExchangeTimeout time.Duration
	// MaxPageBytes bounds the body of one page the pull reads; default
	// 32 MiB.
	MaxPageBytes int64
	// StartWait bounds how long a process that does not own the worker's
	// cache waits for its owner; default 60 s.
	StartWait time.Duration
	// NoLoops turns the flush, cleanup and pull loops off (tests and
	// short-lived commands call Flush, Cleanup and Pull themselves).
	NoLoops bool
	// Replica, when set, is called when Open opens the cache's store for
	// the replicator and the fence (either may be nil) of the store:
	// while this process owns it, the owner ships the cache file to the
	// replica (owner.Options.Replica, Fence).
	Replica func() (owner.Replicator, owner.Fence, error)
}

// Cache is one worker's LWW cache. A Cache whose engine is off (see
// Config.Engine) is a no-op: Get finds nothing, Set and Delete keep
// nothing.
type Cache struct {
	cfg  Config
	opts Options
	log  *slog.Logger
	now  func() time.Time
	kind recordstore.Kind
	met  *metrics

	store *records.Store // nil when the engine is off
	rd    *reader        // nil when the engine is off

	// mu guards mem, marks, ownMax and fails.
	mu    sync.Mutex
	mem   *memory
	marks map[Scope]Cursor
	// ownMax is the highest updated_at_ms of a cluster or global row this
	// worker committed (never lowered): each flush stamps its own rows
	// above it, so a row never commits behind a cursor a peer may hold.
	ownMax int64
	fails  int
	// stale is set when another process's batch was applied: the marks
	// are read again at the next flush.
	stale atomic.Bool
	// resync counts the batches other processes spooled into this
	// running cache; the card carries it (registry.Features.CacheResync).
	resync atomic.Int64

	// writeMu serializes Flush and Cleanup with Close.
	writeMu sync.Mutex
	// closed is set by Close (under writeMu); readers check it without
	// the lock, so a page never waits for a flush.
	closed atomic.Bool

	pull *puller

	// faults are the tests' seams (export_test.go): apply fails an Apply
	// before it writes; page runs before a page is read; betweenScopes
	// runs between the searches of a two-scope page; afterFlush runs
	// after a flush committed, before its entries are kept in memory.
	faults struct {
		apply         func() error
		page          func(context.Context)
		betweenScopes func()
		afterFlush    func()
	}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// EngineFolder is the folder of storage.dir that holds the cache stores'
// engine files. Worker names never start with a dot, so nothing of a
// recorder's (<worker>.records...) can have a name in it.
const EngineFolder = ".cache"

// StorePath is the configured path of the worker's cache store,
// <storage.dir>/.cache/<worker>.records: the engine keeps its lock, state
// file, socket and spool beside it (<worker>.records.lock, ...). It is
// not <storage.dir>/<worker>-cache.records, which is the recorder store
// of a worker named <worker>-cache. The live file is
// <storage.dir>/<worker>-cache.db.
func StorePath(cfg Config) string {
	return filepath.Join(cfg.StorageDir, EngineFolder, cfg.WorkerName+".records")
}

// FilePath is the cache file, <storage.dir>/<worker>-cache.db.
func FilePath(cfg Config) string {
	return filepath.Join(cfg.StorageDir, dbfiles.CacheFileName(cfg.WorkerName))
}

// errNotOwner is why a process that does not own the cache cannot flush
// or clean it: only the owner writes the file directly.
var errNotOwner = recordstore.Errorf(recordstore.ErrUnsupported, "another process owns this worker's cache")

// Open starts the cache of cfg. With cache.enabled false it creates
// nothing; enabled without a storage.dir it logs
// cache_engine_disabled_no_storage_dir and creates nothing. Else it
// creates storage.dir (0700) and takes part in the owner election of the
// worker's cache store: the owner opens <worker>-cache.db (WAL,
// synchronous=NORMAL, busy_timeout 10000; never rotated, never sealed),
// declares cache_entries, reads its marks and starts the flush, cleanup
// and pull loops; any other process (a CLI while the worker runs) writes
// through the spool into the owner's file and reads the file through a
// read-only connection. On error nothing is left open; storage.dir and an
// empty cache file may have been created.
func Open(ctx context.Context, cfg Config, opts Options) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ExchangeTimeout <= 0 {
		opts.ExchangeTimeout = 5 * time.Second
	}
	if opts.MaxPageBytes <= 0 {
		opts.MaxPageBytes = 32 << 20
	}
	c := &Cache{cfg: cfg, opts: opts, log: opts.Logger, now: opts.Now, kind: Kind(),
		mem: newMemory(cfg.MaxMemoryEntries), marks: map[Scope]Cursor{}}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.met = newMetrics(opts.Registerer, c)
	c.pull = newPuller(c)
	if !cfg.Enabled {
		return c, nil
	}
	if cfg.StorageDir == "" {
		c.log.Warn("cache_engine_disabled_no_storage_dir", "worker", cfg.WorkerName)
		return c, nil
	}
	if err := c.openStore(ctx); err != nil {
		c.cancel()
		return nil, err
	}
	if c.Owner() && !opts.NoLoops {
		c.start()
	}
	return c, nil
}

// openStore is Open's part that touches the disk.
func (c *Cache) openStore(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(c.cfg.StorageDir, EngineFolder), fsutil.DirMode); err != nil {
		return fmt.Errorf("create storage.dir %s: %w", c.cfg.StorageDir, err)
	}
	path, live := StorePath(c.cfg), FilePath(c.cfg)
	var (
		rep   owner.Replicator
		fence owner.Fence
	)
	if c.opts.Replica != nil {
		var err error
		if rep, fence, err = c.opts.Replica(); err != nil {
			return fmt.Errorf("open the cache of %s: %w", c.cfg.WorkerName, err)
		}
	}
	st, err := records.Open(ctx, path, records.Options{
		Owner: records.OwnerOptions{
			Replica:     rep,
			Fence:       fence,
			StartWait:   c.opts.StartWait,
			Logger:      c.log,
			NoPromotion: true,
			// A write another process spooled may change any key: the
			// memory layer forgets its clean entries.
			// Its rows carry that process's clock, maybe behind a cursor a
			// peer holds: the card's resync count tells peers to pull again.
			Events: owner.Events{Batch: func(recordstore.BatchResult) {
				c.forgetClean()
				c.stale.Store(true)
				c.resync.Add(1)
			}},
		},
		LiveFile:      live,
		SweepInterval: -1,
		BusyTimeout:   BusyTimeoutMS * time.Millisecond,
		ReadConns:     1,
		// Only the owner opens the cache file: another process writes
		// through the spool.
		SubmitOnly: errNotOwner,
	})
	if err != nil {
		return fmt.Errorf("open the cache of %s: %w", c.cfg.WorkerName, err)
	}
	c.store = st
	if st.Role() == owner.RoleOwner {
		if _, err := st.DeclareKinds(ctx, []recordstore.Kind{c.kind}, owner.WriteOptions{}); err != nil {
			_ = st.Close()
			return fmt.Errorf("declare cache_entries in %s: %w", live, err)
		}
	}
	if c.rd, err = openReader(live); err != nil {
		_ = st.Close()
		return err
	}
	if st.Role() == owner.RoleOwner {
		m, err := c.rd.marks(ctx, c.cfg.WorkerName)
		if err != nil {
			_ = c.rd.close()
			_ = st.Close()
			return err
		}
		c.setMarks(m)
	}
	return nil
}

// start runs the flush, cleanup and pull loops until Close.
func (c *Cache) start() {
	c.loop(c.cfg.FlushInterval, func(ctx context.Context) { _ = c.Flush(ctx) })
	c.loop(c.cfg.CleanupInterval, func(ctx context.Context) { _, _ = c.Cleanup(ctx) })
	if c.cfg.Exchange && c.opts.Peers != nil {
		c.loop(c.cfg.ExchangeInterval, func(ctx context.Context) {
			cctx, cancel := context.WithTimeout(ctx, c.cfg.ExchangeInterval*9/10)
			defer cancel()
			c.Pull(cctx)
		})
	}
}

func (c *Cache) loop(every time.Duration, run func(context.Context)) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
				run(c.ctx)
			}
		}
	}()
}

// Engine reports whether the cache engine runs in this process (enabled,
// a storage.dir, opened and not closed).
func (c *Cache) Engine() bool {
	return c.store != nil && !c.closed.Load()
}

// Owner reports whether this process owns the worker's cache file.
func (c *Cache) Owner() bool { return c.store != nil && c.store.Role() == owner.RoleOwner }

// Worker is the worker's name: the origin of this cache's writes.
func (c *Cache) Worker() string { return c.cfg.WorkerName }

// Cluster is the worker's cluster name.
func (c *Cache) Cluster() string { return c.cfg.ClusterName }

func (c *Cache) nowMS() int64 { return c.now().UnixMilli() }

// Get returns the entry of key when one is stored and not expired: from
// memory, else from the file through the reader connection (the entry is
// then kept in memory). Off: nothing is found.
func (c *Cache) Get(ctx context.Context, key string) (Entry, bool, error) {
	if !c.Engine() {
		return Entry{}, false, nil
	}
	now := c.nowMS()
	c.mu.Lock()
	e, ok := c.mem.get(key)
	gen := c.mem.gen
	c.mu.Unlock()
	if ok {
		c.met.hits.WithLabelValues("memory").Inc()
		if e.Expired(now) {
			return Entry{}, false, nil
		}
		return e, true, nil
	}
	e, ok, err := c.rd.get(ctx, key)
	if err != nil {
		return Entry{}, false, err
	}
	if !ok {
		c.met.misses.Inc()
		return Entry{}, false, nil
	}
	c.met.hits.WithLabelValues("file").Inc()
	c.mu.Lock()
	// Kept unless written since, or forgotten since (a newer row may
	// have been applied after this read).
	if _, dirty := c.mem.dirty[key]; !dirty && c.mem.gen == gen {
		c.mem.put(e)
	}
	c.mu.Unlock()
	if e.Expired(now) {
		return Entry{}, false, nil
	}
	return e, true, nil
}

// Set stores value (JSON text, kept as given) under key with scope, to
// expire ttl from now (0: never). Its updated_at_ms is now, or one more
// than the stored entry's when that is not older, so a local write always
// wins over what this worker knows; its created_at_ms is the stored
// entry's when one is stored and not expired. The owner keeps it in
// memory until the next flush; any other process appends it through the
// spool at once and waits for the owner's result. Bad input is
// ErrBadEntry and nothing is kept. Off: nothing is kept.
func (c *Cache) Set(ctx context.Context, key, value string, scope Scope, ttl time.Duration) error {
	if ttl < 0 {
		return fmt.Errorf("%w: key %q: ttl %v is negative", ErrBadEntry, key, ttl)
	}
	e := Entry{Key: key, Scope: scope, Value: value, SizeBytes: int64(len(value)), OriginWorkerID: c.cfg.WorkerName}
	if err := e.Check(); err != nil {
		return err
	}
	return c.write(ctx, e, ttl, false)
}

// Delete makes key not found from now on: it writes the entry again,
// already expired (expires_at_ms = now), through the same path as Set (Cleanup removes it; see
// the package documentation for what a delete does not do). A key that
// is not stored is left alone.
func (c *Cache) Delete(ctx context.Context, key string) error {
	if key == "" || !utf8.ValidString(key) {
		return fmt.Errorf("%w: the key must be non-empty UTF-8 text", ErrBadEntry)
	}
	if !c.Engine() {
		return nil
	}
	prev, ok, err := c.Get(ctx, key)
	if err != nil || !ok {
		return err
	}
	prev.OriginWorkerID = c.cfg.WorkerName
	return c.write(ctx, prev, 0, true)
}

// write stamps e (times, created_at_ms kept) and keeps it dirty, or, in a
// process that does not own the cache, appends it now.
func (c *Cache) write(ctx context.Context, e Entry, ttl time.Duration, expire bool) error {
	if !c.Engine() {
		return nil
	}
	now := c.nowMS()
	prev, found, err := c.lookup(ctx, e.Key)
	if err != nil {
		return err
	}
	e.CreatedAtMS, e.UpdatedAtMS = now, now
	if found {
		if !prev.Expired(now) {
			e.CreatedAtMS = prev.CreatedAtMS
		}
		if prev.UpdatedAtMS >= now {
			e.UpdatedAtMS = prev.UpdatedAtMS + 1
		}
	}
	switch {
	case expire:
		e.ExpiresAtMS = ptr(now)
	case ttl > 0:
		e.ExpiresAtMS = ptr(e.UpdatedAtMS + ttl.Milliseconds())
	default:
		e.ExpiresAtMS = nil
	}
	if !c.Owner() {
		_, err := c.Apply(ctx, []Entry{e})
		return err
	}
	c.mu.Lock()
	c.mem.dirty[e.Key] = e
	c.mu.Unlock()
	return nil
}

// lookup returns the entry of key, expired or not, from memory or the
// file.
func (c *Cache) lookup(ctx context.Context, key string) (Entry, bool, error) {
	c.mu.Lock()
	e, ok := c.mem.get(key)
	c.mu.Unlock()
	if ok {
		return e, true, nil
	}
	return c.rd.get(ctx, key)
}

// forgetClean drops the memory layer's clean entries.
func (c *Cache) forgetClean() {
	c.mu.Lock()
	c.mem.forgetClean()
	c.mu.Unlock()
}

// List returns every stored row, expired or not, in key order: the
// file's content (dirty entries not yet flushed are not in it).
func (c *Cache) List(ctx context.Context) ([]Entry, error) {
	if !c.Engine() {
		return nil, ErrOff
	}
	return c.rd.list(ctx)
}

// Close stops the loops, flushes the dirty entries (while ctx lasts) and
// closes the store (the owner drains its spool first) and the reader.
// The file stays in storage.dir. A replicated owner (Options.Replica)
// waits, within ctx, for its replica to hold the final flush. An error of
// the final flush is returned
// after everything is closed; its entries are lost.
func (c *Cache) Close(ctx context.Context) error {
	c.cancel()
	c.wg.Wait()
	if !c.Engine() {
		return nil
	}
	var errs []error
	if c.Owner() {
		errs = append(errs, c.Flush(ctx))
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return nil
	}
	c.closed.Store(true)
	if c.opts.Replica != nil && c.Owner() {
		// The replica gets the final flush before the store closes (its
		// close drains too, but from a loop that may not have begun in a
		// short command); ctx bounds the wait, a failure is logged.
		if err := c.store.WaitReplicated(ctx); err != nil {
			c.log.Warn("cache_replica_wait_failed", "error", err)
		}
	}
	errs = append(errs, c.rd.close(), c.store.Close())
	return errors.Join(errs...)
}
