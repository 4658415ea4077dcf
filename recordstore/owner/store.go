// Store: one process's handle on a store — its role, its backend, its
// background loops — and Open/Close.

package owner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Target is what the owner needs of a backend: the record store, exactly-once
// batches, and a switch from read-only to writable in place.
type Target interface {
	recordstore.Backend
	recordstore.BatchAppender
	// Promote makes a read-only backend writable in place (a new epoch).
	Promote(ctx context.Context) error
	// Sync makes every committed transaction survive a power loss. The
	// owner calls it before it moves applied batches out of incoming/:
	// until then their folders are their durable copy.
	Sync(ctx context.Context) error
	// Epoch is the writer epoch stored in the live file.
	Epoch() int64
	// LivePath is the live file's path.
	LivePath() string
}

// Submitter hands a read-only backend's mutation to the owner and returns
// the ledger's result for it. Batch ID and Producer are filled in by the
// submitter.
type Submitter func(ctx context.Context, b recordstore.Batch) (recordstore.BatchResult, error)

// Events are callbacks for what tests and metrics care about. They are
// called from the store's goroutines and must not block.
type Events struct {
	// Role is called after every role change.
	Role func(Role)
	// Batch is called after a spooled batch committed or failed.
	Batch func(recordstore.BatchResult)
	// Promoted is called after this process, a non-owner, became the
	// owner: when, and how long each step took (after Role).
	Promoted func(Promotion)
}

// Options configure Open. Path and Open are required.
type Options[T Target] struct {
	// Path is the configured store path P.
	Path string
	// Open opens the backend: writable (submit nil) for the owner,
	// read-only with submit for everyone else.
	Open func(ctx context.Context, readOnly bool, submit Submitter) (T, error)
	// CatalogVersion is this build's catalog version. A non-owner whose
	// owner runs another one opens detached with OpenDetached, or refuses
	// to open (*CatalogVersionError) without it.
	CatalogVersion int
	// OpenDetached, when set, opens the backend of a non-owner whose owner
	// runs another catalog version: cause is the *CatalogVersionError that
	// every read of the backend must fail with (errors.Is
	// ErrCatalogVersion), and writes go through submit, as in Open (spool
	// manifests do not depend on the catalog version). Such a process has
	// RoleDetached, starts no promoter and never takes the store over, not
	// even to drain on Close: it stays detached until it is reopened.
	// While no owner runs, its writes wait, durable in the spool, for an
	// owner of the store's catalog version (the caller gets a
	// *PendingError when its ctx ends first). Such a backend is not the
	// one Open returns, so T is then an interface both satisfy
	// (records.Backend holds a *sqlite.Backend or a
	// *submitonly.Backend).
	OpenDetached func(ctx context.Context, submit Submitter, cause error) (T, error)
	// Build names this build in the state file and manifests.
	Build string
	// Format is the spool codec non-owner writes use; default "ndjson".
	Format string
	// SpoolOnly makes this process, while it does not own the store,
	// send every write through the spool, never over the owner's socket
	// (the fast path, ActionAppend). WriteOptions.Spool asks the same of
	// one write.
	SpoolOnly bool
	// StartWait bounds how long a non-owner waits for the owner to be
	// ready; default 60s.
	StartWait time.Duration
	// DrainOnClose bounds the owner's final drain; default 10s. A
	// non-owner with DrainOnClose > 0 drains the spool on Close when it
	// can take the lock (the owner vanished).
	DrainOnClose time.Duration
	// PollMin and PollMax bound the ingest loop's polling fallback
	// (defaults 50ms and 500ms); a socket poke wakes it at once.
	PollMin, PollMax time.Duration
	// Heartbeat is the state file refresh period; default 5s.
	Heartbeat time.Duration
	// GapWait is how long a producer's out-of-order batch waits for its
	// predecessor; default 60s.
	GapWait time.Duration
	// Retry is how a batch that fails transiently (an I/O error, a busy or
	// full database) is tried again before it is failed; see RetryPolicy.
	Retry RetryPolicy
	// GCInterval is the spool GC and ledger sweep period; default 1m.
	GCInterval time.Duration
	// GC holds the spool GC ages.
	GC spool.GCOptions
	// LedgerRetention is how long ledger rows are kept; default 7 days.
	LedgerRetention time.Duration
	// Spool configures the spool folder (limits, clock, failpoints).
	// Its Prepare is always set: a store keeps one empty batch folder
	// ready for its next publish, removed by Close.
	Spool spool.Options
	// Logger receives the store's log lines; default: discard.
	Logger *slog.Logger
	// Events are callbacks.
	Events Events
	// Replica, when set, replicates the live file while this process
	// owns the store: started as it becomes the owner (at Open or by a
	// promotion), stopped — after shipping what is left, bounded by
	// DrainOnClose — before Close lets go of the lock. Non-owners never
	// run it. A Replicator serves one store: give each store its own.
	// The backend must then leave checkpoints to the replicator (see
	// sqlite.Options.NoCheckpoint), which has to see every WAL frame
	// before it is checkpointed away.
	Replica Replicator
	// Fence, when set, is a lease on the store shared by every host that
	// may own it (package recordstore/replica has one on the replica's
	// object store). The owner takes it after the file lock and before it
	// writes anything; while another process holds it this process stays
	// a non-owner and its promoter tries again every second. The owner
	// checks it before every commit: once it is lost, the write fails with
	// a *FencedError (code "fenced"), the owner steps down — replication
	// stops without shipping more, the lease and the lock are let go —
	// and this process never writes the store again (its later writes
	// fail the same way). A closing owner releases it after shipping. A
	// store with a Fence is never drained on Close by a non-owner.
	Fence Fence
	// Metrics are measurement hooks (see Metrics); zero: none.
	Metrics Metrics
	// Failpoint, when set, is called at named points (see the Failpoint
	// constants); crash tests kill or pause the process there.
	Failpoint func(name string)
	// ReadOnly opens the store without taking part in the election: the
	// backend is opened with Open(ctx, true, nil) — read-only, with no
	// submitter, so that it refuses every mutation with
	// recordstore.ErrReadOnly — and nothing else is done: no folder,
	// lock, spool folder, state file or socket is created or written, and
	// no lock is taken. The process has RoleReadOnly for its whole life
	// and is never promoted. Publish, NewWriter's deliveries, Await and
	// Outcome fail with recordstore.ErrReadOnly; Status reads the state
	// file as ReadStatus does. It is how a read-only copy or backup of a
	// store, or a store in a folder this process cannot write, is read.
	ReadOnly bool
	// NoPromotion keeps a non-owner from ever taking the store over: it
	// starts no promoter and does not drain on Close, so that only a
	// process that opens the store anew becomes its owner. It is for
	// stores whose owner alone knows which live file to write — a caller
	// that names and rotates its live files (see Store.Rotate) — whose
	// non-owners write through the spool only (a submit-only backend).
	// Their batches wait, durable in the spool, while no owner runs.
	NoPromotion bool
	// DeferElection opens the store without taking part in the election
	// until something needs it: Open opens the spool folder (creating it
	// if missing, as any Open does) and the backend read-only, with
	// Open(ctx, true, submit), exactly as a non-owner does, and nothing
	// else: no lock is tried (the lock file is not created), no state file
	// is read or written, no socket is served, no promoter or loop runs.
	// Reads work at once; the process has RoleDeferred. The first
	// operation that needs an owner — a write through the Store (Append,
	// AppendBuffer, AppendFrom, Mutate, DeclareKinds, Publish, a Writer's
	// delivery, Rotate), Await, or a write on the backend itself, which
	// submits it — runs the election then, once for all the callers that
	// arrive meanwhile (each waits until its ctx ends): the lock free,
	// this process becomes the owner by promoting the backend in place;
	// held, it waits for the owner to be ready (StartWait) and becomes a
	// non-owner, with its promoter (unless NoPromotion). An election that
	// fails returns its error to the operation and leaves the store
	// deferred, holding nothing, for the next one to try again (the one
	// exception: a promotion that made the backend writable but could not
	// serve keeps the lock, as the promoter does, and retries serving in
	// the background; the process is then a non-owner until it serves). An
	// election that finds the backend's live file removed or replaced
	// (see LiveChecker) creates nothing and leaves the store gone (see
	// Store.Gone): later writes fail without trying again.
	// When the backend cannot be opened read-only (no live file yet, or
	// one of another catalog version) Open runs the election at once, as
	// without DeferElection. An election that finds the owner running
	// another catalog version fails with its *CatalogVersionError and the
	// store stays deferred: its backend cannot become a detached one in
	// place. Ignored with ReadOnly.
	DeferElection bool
}

// RetryPolicy bounds the retries of a batch that fails transiently: the
// delay before the next try doubles from Min to Max, and once the batch
// has failed Attempts times, or For has passed since its first failure,
// it is failed — recorded as failed in the ledger and moved to failed/,
// where query spool retry can put it back. A batch whose transaction
// failed together with others is tried alone before it is failed, so that
// only the batch at fault fails; and failing it needs the ledger to be
// writable, so a store whose database cannot write at all (a full disk)
// keeps its batches waiting, and retries them at Max, instead.
type RetryPolicy struct {
	Min, Max time.Duration // default 100ms and 30s
	Attempts int           // default 20
	For      time.Duration // default 10m
}

// The failpoints Options.Failpoint is called with.
const (
	FailDuringStarting   = "during-starting"
	FailAfterLedger      = "after-ledger-commit"
	FailBeforeTrash      = "before-trash"
	FailAfterFinalDrain  = "after-final-drain"
	FailAfterPublish     = "after-publish"
	FailBeforeStateReady = "before-state-ready"
)

func (o Options[T]) withDefaults() Options[T] {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.StartWait, 60*time.Second)
	def(&o.DrainOnClose, 10*time.Second)
	def(&o.PollMin, 50*time.Millisecond)
	def(&o.PollMax, 500*time.Millisecond)
	def(&o.Heartbeat, DefaultHeartbeat)
	def(&o.GapWait, 60*time.Second)
	def(&o.Retry.Min, 100*time.Millisecond)
	def(&o.Retry.Max, 30*time.Second)
	def(&o.Retry.For, 10*time.Minute)
	if o.Retry.Attempts <= 0 {
		o.Retry.Attempts = 20
	}
	def(&o.GCInterval, time.Minute)
	def(&o.LedgerRetention, 7*24*time.Hour)
	if o.Format == "" {
		o.Format = spool.FormatNDJSON
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Failpoint == nil {
		o.Failpoint = func(string) {}
	}
	return o
}

// Store is one process's handle on a store. It is safe for concurrent use.
// The backend it returns is the same value for the store's whole life in
// this process, whatever the role: a promotion switches it in place.
type Store[T Target] struct {
	opts    Options[T]
	paths   Paths
	log     *slog.Logger
	spool   *spool.Dir
	lock    *lockFile
	id      *spool.Identity
	backend T
	waiters *waiters
	poke    chan struct{}
	elect   chan struct{} // held by the election of a deferred store

	// pub serializes this process's publishes so that its producer seqs
	// reach incoming/ in order and a failed publish leaves no gap; a batch
	// of the fast path takes its seq under it at once (stamp), and may
	// reach incoming/ later, should it fall back to the spool.
	pub struct {
		sync.Mutex
		seq int64 // last seq published
	}

	// sock is the owner's socket path as last read from the state file.
	sock struct {
		sync.Mutex
		path     string
		noInline string // a socket whose owner answered the append action as unknown
	}

	// conns holds the fast path's kept connections to the owner's socket.
	conns connPool

	mu struct {
		sync.Mutex
		role    Role
		state   State          // what this process last wrote (owner) or read
		ctrl    *controlServer // owner only
		lastErr string
		fatal   error // an fsync failure: the writer stopped
		failed  int
		refused int // entries refused in committed spool batches
		backlog int
		refs    int
		closed  bool
		gone    error // see Gone
	}

	fence fenceState // Options.Fence

	ing ingestState // used by the goroutine that drains (under drain)

	// inline holds the batches sent over the control socket (the append
	// action) that no drain has taken yet.
	inline inlineQueue

	// applied are the batches committed whose folders are still in
	// incoming/; flushMu admits one flush at a time (see flushApplied).
	applied *appliedSet
	flushMu sync.Mutex

	// drain admits one drain at a time (loop, final drain, recheck, the
	// watch, requests) and tells who waits when one ends.
	drain drainGate

	// watching is set while incoming/ is watched (see startWatch): a
	// batch's arrival then starts a drain, and an ingest request only
	// waits for it.
	watching atomic.Bool
	// arrivals counts the watch's wake-ups (and each start of the watch);
	// quiet is what the last listing of incoming/ found (drain gate held).
	// See spoolQuiet.
	arrivals atomic.Uint64
	quiet    quietSpool

	// push is the commit notices: served as owner, subscribed to as
	// non-owner (see push.go).
	push pushState

	ctx         context.Context // the store's life; cancelled by Close
	cancel      context.CancelFunc
	wg          sync.WaitGroup // the promoter
	ownerCancel context.CancelFunc
	ownerWG     sync.WaitGroup // the owner's loops
}

// Open opens the store at opts.Path in this process. The first process to
// take the lock becomes the owner: it opens the backend writable, serves the
// socket and ingests the spool. Every other process waits for the owner to
// be ready (StartWait), opens the backend read-only and keeps trying the
// lock to promote itself when the owner goes away; when the owner runs
// another catalog version it opens the backend detached instead (see
// Options.OpenDetached), or refuses. Opening the same path
// twice in one process returns the same Store (reference counted; each Open
// needs its Close), except that an Open with Options.ReadOnly and one
// without get two Stores. With Options.ReadOnly only the backend is opened
// (see there).
//
// On error nothing is held: no lock, no socket, no open backend. Folders
// (the store's and the spool's) may have been created.
func Open[T Target](ctx context.Context, opts Options[T]) (*Store[T], error) {
	if opts.Path == "" || opts.Open == nil {
		return nil, recordstore.Errorf(recordstore.ErrInvalid, "owner.Options needs Path and Open")
	}
	if opts.Format != "" {
		if _, err := spool.Lookup(opts.Format); err != nil { // before anything is created
			return nil, fmt.Errorf("owner.Options.Format: %w", err)
		}
	}
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("store path: %w", err)
	}
	opts.Path = abs
	return shared(registryKey(opts), func() (*Store[T], error) { return open(ctx, opts.withDefaults()) })
}

// registryKey is the key of a store in the in-process registry: its
// absolute path, marked for a read-only open, which must not share a
// handle with an open that takes part in the election (either way round).
func registryKey[T Target](opts Options[T]) string {
	if opts.ReadOnly {
		return opts.Path + "\x00read-only"
	}
	return opts.Path
}

func open[T Target](ctx context.Context, opts Options[T]) (*Store[T], error) {
	if opts.ReadOnly {
		return openReadOnly(ctx, opts)
	}
	if err := fsutil.MkdirAll(filepath.Dir(opts.Path)); err != nil {
		return nil, err
	}
	if err := CheckFileSystem(filepath.Dir(opts.Path)); err != nil {
		return nil, err
	}
	s := newStore(opts)
	s.mu.role = RoleNonOwner
	var err error
	sopts := opts.Spool
	sopts.Prepare = true // this process may publish again and again
	if s.spool, err = spool.Open(ctx, opts.Path, sopts); err != nil {
		return nil, err
	}
	if s.lock, err = newLockFile(s.paths.Lock); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if opts.DeferElection && s.openDeferred(ctx) {
		return s, nil
	}
	if err := s.start(ctx); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// newStore returns the handle open fills in.
func newStore[T Target](opts Options[T]) *Store[T] {
	s := &Store[T]{
		opts:    opts,
		paths:   PathsFor(opts.Path),
		log:     opts.Logger.With("component", "recordstore_owner", "store", opts.Path),
		id:      spool.NewIdentity(opts.Build),
		waiters: newWaiters(),
		applied: newAppliedSet(),
		poke:    make(chan struct{}, 1),
		elect:   make(chan struct{}, 1),
	}
	s.ing.init(s.opts.Retry)
	return s
}

// openReadOnly opens the store with Options.ReadOnly: the backend alone,
// read-only and without a submitter. It creates, writes and locks nothing;
// on error nothing is open.
func openReadOnly[T Target](ctx context.Context, opts Options[T]) (*Store[T], error) {
	s := newStore(opts)
	b, err := opts.Open(ctx, true, nil)
	if err != nil {
		return nil, err
	}
	s.backend = b
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.setRole(RoleReadOnly)
	return s, nil
}

// start takes the owner role or the non-owner role.
func (s *Store[T]) start(ctx context.Context) error {
	won, err := s.lock.try()
	if err != nil {
		return err
	}
	if !won {
		st, owned, err := s.waitReady(ctx)
		if err != nil {
			return err
		}
		won = owned
		if !won {
			return s.startNonOwner(ctx, st)
		}
	}
	if err := s.startOwner(ctx); err != nil {
		_ = s.lock.unlock()
		if fenceHeld(err) {
			// Another host owns the store: wait as a non-owner, the
			// promoter trying the lease again.
			s.log.Info("the store's lease is held elsewhere; waiting as a non-owner", "err", err)
			return s.startNonOwner(ctx, State{})
		}
		return err
	}
	return nil
}

// Backend returns the store's backend. The value never changes.
func (s *Store[T]) Backend() T { return s.backend }

// Role returns this process's current role.
func (s *Store[T]) Role() Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.role
}

// Paths returns the store's files.
func (s *Store[T]) Paths() Paths { return s.paths }

// Spool returns the store's spool folder; nil for a Store opened with
// Options.ReadOnly, which has none.
func (s *Store[T]) Spool() *spool.Dir { return s.spool }

// Status reports on the store as this process sees it: the live state when
// this process owns it, else what ReadStatus observes.
func (s *Store[T]) Status(ctx context.Context) (Status, error) {
	if s.Role() == RoleOwner {
		return s.controlStatus(ctx), nil
	}
	st, err := ReadStatus(ctx, s.opts.Path, s.opts.Heartbeat)
	if err != nil {
		return st, err
	}
	st.Role = s.Role()
	if st.Role != RoleOwner { // this process's own wake mode, not the owner's
		st.Wake = s.push.wakeMode()
		st.Notices = s.push.notices.Load()
	}
	return st, nil
}

func (s *Store[T]) setRole(r Role) {
	s.mu.Lock()
	s.mu.role = r
	s.mu.Unlock()
	s.log.Info("role", "role", string(r))
	if s.opts.Events.Role != nil {
		s.opts.Events.Role(r)
	}
}

func (s *Store[T]) setLastError(err error) {
	s.mu.Lock()
	s.mu.lastErr = err.Error()
	if errors.Is(err, fsutil.ErrSync) && s.mu.fatal == nil {
		s.mu.fatal = err
	}
	s.mu.Unlock()
}

// fatal returns the fsync failure that stopped this writer, if any.
func (s *Store[T]) fatal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.fatal
}

// Close releases this Open. The last Close of the process stops the store:
// as owner it stops the socket, drains the spool (bounded by DrainOnClose),
// ships what its replica lacks and stops replicating (Options.Replica; the
// ship bounded by DrainOnClose too — what it leaves, the next owner ships),
// removes its state file, unlocks, then drains again for as long as
// batches keep arriving and the lock is free (so a batch published during
// the final drain is not stranded), and closes the backend.
//
// A batch the final drain could not apply (another producer's, failing
// transiently, or one DrainOnClose left no time for) is not an error of
// Close: it stays in incoming/, durable, for the next owner, and a warning
// is logged. Close fails for its own work only: the state file, the lock,
// the backend, the spool folder, or an fsync failure (recordstore.ErrFsync) of
// this writer. On error the lock is released and the backend closed all
// the same.
func (s *Store[T]) Close() error {
	return release(registryKey(s.opts), s, s.close)
}

// usable fails with an error wrapping recordstore.ErrClosed once Close has
// begun: nothing is published, awaited or delivered through a closed Store;
// and with one wrapping recordstore.ErrReadOnly for a Store opened with
// Options.ReadOnly, which has no spool.
func (s *Store[T]) usable() error {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("store %s: %w", s.opts.Path, recordstore.ErrClosed)
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("store %s: %w: opened read-only, it has no spool", s.opts.Path, recordstore.ErrReadOnly)
	}
	return nil
}

// ready is usable, then Gone, then, for a store opened with
// Options.DeferElection and not elected yet, the election (see elect).
func (s *Store[T]) ready(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := s.Gone(); err != nil {
		return err
	}
	if err := s.fencedErr(); err != nil {
		return err
	}
	return s.elected(ctx)
}

func (s *Store[T]) close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()       // the promoter
	s.fence.wg.Wait() // a step-down after the lease was lost
	// Read the role only now: a promotion may have completed while Close
	// waited for the promoter, and then this process must leave as owner.
	role := s.Role()
	var errs []error
	switch role {
	case RoleOwner:
		errs = append(errs, s.closeOwner())
	case RoleReadOnly, RoleDeferred: // nothing was taken but the backend (and the spool folder)
	default:
		errs = append(errs, s.closeNonOwner())
	}
	s.setRole(RoleClosed)
	s.conns.close()
	errs = append(errs, s.backend.Close())
	if s.spool != nil {
		errs = append(errs, s.spool.Close())
	}
	return errors.Join(errs...)
}
