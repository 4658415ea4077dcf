// The Recorder: the flight recorder of one worker, on the engine. It owns
// the worker's store (one owner per worker name, elected by the store's
// flock), buffers events in memory, flushes them as one transaction per
// flush interval, writes worker_config and worker_state, rotates the live
// file, seals the old one and moves it into the history folder in the
// background.

package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

// DefaultLeftoverDelay is how long a recorder file and its -wal must be
// untouched before it counts as a leftover, and how long after its start
// a recorder looks for leftovers a second time (the spec's 300 seconds).
const DefaultLeftoverDelay = 300 * time.Second

// Options configure Open beyond Config. The zero value is usable.
type Options struct {
	// Logger receives the recorder's log events; default: discard.
	Logger *slog.Logger
	// Registerer, when set, has the recorder's metrics registered on it
	// (see docs/drakkar.md, "Metrics").
	Registerer prometheus.Registerer
	// Now is the clock; default time.Now. Every time the recorder writes
	// is one reading of it, truncated to whole microseconds.
	Now func() time.Time
	// Info is what worker_config says of the worker (redacted before it
	// is written). Its worker and cluster names default to the Config's.
	Info WorkerInfo
	// State, when set, gives the worker_state snapshot written every
	// state sync interval; the recorder fills updated_at and uptime.
	State func() State
	// LeftoverDelay replaces DefaultLeftoverDelay (tests).
	LeftoverDelay time.Duration
	// Mover publishes sealed files into the history folder; default a
	// Mover on the real file system.
	Mover *Mover
	// StartWait bounds how long a process that does not own the worker's
	// store waits for its owner to be ready; default 60s.
	StartWait time.Duration
	// Build names this build in the store's state file.
	Build string
	// Waiting, when set, is called when this process, which does not own
	// the worker's store, starts waiting for the outcome of a batch it
	// spooled, with the state file of the owner it waits for (once per
	// owner: again after the store changed hands).
	Waiting func(owner.State)
	// AfterRotate, when set, runs after each rotation tick on the
	// background job, after the sealed files were moved into the history
	// folder: one call at a time, never overlapping a move. The worker
	// runs its archive pass here (drakkar/archive.Pass). Its ctx ends
	// when Close begins; it should then end soon.
	AfterRotate func(ctx context.Context)
	// Replica, when set, is called each time this process opens the
	// worker's store (at Open, and again when it takes the store over)
	// for the replicator and the fence (either may be nil) of that open:
	// while this process owns the store, the owner ships the live file to
	// the replica (owner.Options.Replica, Fence). A replica follows one
	// live file: a replicated recorder does not rotate (Rotate does
	// nothing); its live file is sealed and moved on Close, after the
	// replica got what was committed.
	Replica func() (owner.Replicator, owner.Fence, error)
}

// Recorder is one worker's flight recorder. Record is safe for concurrent
// use and never blocks; the rest is called by the worker's lifecycle.
type Recorder struct {
	cfg      Config
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	instance string
	filter   Filter
	buf      *Buffer
	met      *metrics
	started  time.Time

	// store is nil in memory-only mode; Write replaces it (under mu) when
	// this process takes the store over. kinds are the bound kinds.
	store  atomic.Pointer[records.Store]
	events recordstore.Kind
	state  recordstore.Kind
	wconf  recordstore.Kind
	dog    *Watchdog

	// mu serializes flushes, rotations and the close; live is the live
	// file's path while this process owns the store.
	mu   sync.Mutex
	live string
	// lastStart is the start time in the name of the newest live file
	// (freeLiveName); guarded by mu after Open.
	lastStart time.Time

	bl *backlog
	// status holds the last seal outcome and the next rotation time.
	status statusState
	// rotated wakes the background job after a rotation tick, for
	// Options.AfterRotate (buffered 1: ticks missed while it runs merge).
	rotated chan struct{}
	// stopped is set when Close begins: Record keeps nothing more.
	stopped atomic.Bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// errNotOwner is why a process that does not own the worker's store
// cannot read it: only the owner opens recorder files.
var errNotOwner = recordstore.Errorf(recordstore.ErrUnsupported, "another process owns this worker's recorder: only it reads the live file")

// storePath is the configured path of the worker's store: the engine
// keeps its lock, state file, socket and spool beside it
// (<worker>.records.lock, ...). The live files themselves are the
// recorder's <worker>-<timestamp>.db.
func storePath(cfg Config) string {
	return filepath.Join(cfg.StorageDir, cfg.WorkerName+".records")
}

// Open starts the recorder of cfg. In memory-only mode (storage.dir empty,
// or ui.enabled false) it creates no file and Record keeps nothing. Else it
// creates storage.dir (0700; a warning when it is world-writable) and
// takes part in the owner election of the worker's store. As the owner it
// opens the watchdog file (a stale one is logged as a killed previous
// run) and a new live file <worker>-<timestamp>.db (carrying the spool
// ledger of the worker's earlier files and of the ledger file, see
// ledgerFile, so that a batch applied to one of them is never applied
// again), declares the three tables, writes worker_config and starts the
// flush, state, rotation and leftover jobs. A process that does not own
// it (another process with the same worker name) records through the
// spool into the owner's file; it takes the store over only when the
// owner goes away while it waits for the outcome of a batch it spooled
// (see Write). Its buffered events wait for the owner like Write's.
//
// A Config that does not validate fails with an error naming the key, and
// nothing is created. On another error nothing is left open; storage.dir
// and an empty live file (a leftover for the next start) may have been
// created, and the watchdog file is removed again when this start wrote
// it (a failed start is no killed run; recorder_watchdog_not_cleared is
// logged when that removal fails). A full disk fails with an error
// wrapping recordstore.ErrDiskFull (code disk_full).
func Open(ctx context.Context, cfg Config, opts Options) (*Recorder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LeftoverDelay <= 0 {
		opts.LeftoverDelay = DefaultLeftoverDelay
	}
	if opts.Mover == nil {
		opts.Mover = &Mover{Log: opts.Logger}
	}
	r := &Recorder{
		cfg:      cfg,
		opts:     opts,
		log:      opts.Logger,
		now:      func() time.Time { return dbfiles.Micro(opts.Now()) },
		instance: dbfiles.NewHex16(),
		filter:   NewFilter(cfg),
		buf:      NewBuffer(cfg.MaxBuffer, cfg.MaxFlushRetries),
		events:   eventsKind(),
		state:    workerStateKind(),
		wconf:    workerConfigKind(),
	}
	r.started = r.now()
	r.met = newMetrics(opts.Registerer, r)
	r.bl = newBacklog()
	r.rotated = make(chan struct{}, 1)
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if !cfg.WritesFiles() {
		r.log.Info("recorder_memory_only", "reason", "storage.dir is empty or the UI is off: no recorder files")
		return r, nil
	}
	if err := r.openFiles(ctx); err != nil {
		r.cancel()
		return nil, diskFull(err)
	}
	r.start()
	return r, nil
}

// openFiles is Open's part that touches the disk.
func (r *Recorder) openFiles(ctx context.Context) error {
	dir := r.cfg.StorageDir
	if err := os.MkdirAll(dir, fsutil.DirMode); err != nil {
		return fmt.Errorf("create storage.dir %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o002 != 0 {
		r.log.Warn("recorder_storage_dir_world_writable", "folder", dir, "mode", fi.Mode().Perm().String())
	}
	st, err := r.openStore(ctx)
	if err != nil {
		return err
	}
	r.store.Store(st)
	if st.Role() != owner.RoleOwner {
		// A process recording through a running worker's spool must be
		// configured as that worker is.
		if err := r.checkOwnerRun(); err != nil {
			_ = st.Close()
			r.store.Store(nil)
			return err
		}
		return nil
	}
	if err := r.ownerSetup(ctx); err != nil {
		_ = st.Close()
		if r.dog != nil {
			// A start that failed is a stop, not a killed run: the next
			// start must not report one (a full disk fails here).
			if derr := r.dog.CleanExit(); derr != nil {
				r.log.Warn("recorder_watchdog_not_cleared", "watchdog", r.dog.Path(), "error", derr)
			}
			r.dog = nil
		}
		return err
	}
	return nil
}

// openStore takes part in the owner election of the worker's store. The
// live file is named, and the files whose ledger it carries are listed,
// only once this process holds the store's lock (records.Options.NameLive):
// no other process creates or seals a file of the worker meanwhile.
func (r *Recorder) openStore(ctx context.Context) (*records.Store, error) {
	var (
		rep   owner.Replicator
		fence owner.Fence
	)
	if r.opts.Replica != nil {
		var err error
		if rep, fence, err = r.opts.Replica(); err != nil {
			return nil, fmt.Errorf("open the recorder of %s: %w", r.cfg.WorkerName, err)
		}
	}
	st, err := records.Open(ctx, storePath(r.cfg), records.Options{
		Owner: records.OwnerOptions{
			Replica:         rep,
			Fence:           fence,
			Build:           r.opts.Build,
			StartWait:       r.opts.StartWait,
			Logger:          r.log,
			LedgerRetention: LedgerRetention,
			// Only the process that names the live file may write it: a
			// process that finds the worker's store owned writes through
			// the spool (see Write for what it does when the owner goes
			// away).
			NoPromotion: true,
		},
		SweepInterval: -1,
		NameLive:      r.nextLive,
		SubmitOnly:    errNotOwner,
		WrapSubmitOnly: func(b *submitonly.Backend) records.Backend {
			return &spooledBackend{Backend: b, outcome: r.storedOutcome}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("open the recorder of %s: %w", r.cfg.WorkerName, err)
	}
	return st, nil
}

// nextLive names the live file of a new owner and lists the files whose
// ledger it carries: the newest of the worker's files in storage.dir
// (oldest first; each carried the ledger of those before it), then the
// ledger file (see ledgerFile), last, so that a file sealed while the new
// one is created is found there.
func (r *Recorder) nextLive() (string, []string, error) {
	carry, err := ownFiles(r.cfg.StorageDir, r.cfg.WorkerName)
	if err != nil {
		return "", nil, err
	}
	if len(carry) > 0 {
		// A new file starts after this worker's newest one.
		if t, ok := dbfiles.ParseRecorderFileName(r.cfg.WorkerName, filepath.Base(carry[len(carry)-1])); ok && t.After(r.lastStart) {
			r.lastStart = t
		}
	}
	live, err := r.freeLiveName(r.now())
	if err != nil {
		return "", nil, err
	}
	if len(carry) > sqlite.MaxCarryFrom-1 {
		carry = carry[len(carry)-(sqlite.MaxCarryFrom-1):]
	}
	return live, append(carry, ledgerFile(r.cfg)), nil
}

// ownerSetup is what a process does once it owns the worker's store: the
// watchdog file, the tables and worker_config in the live file.
func (r *Recorder) ownerSetup(ctx context.Context) error {
	// Only the owner keeps the watchdog: another process of the worker
	// would take the owner's file for a killed run's.
	dog, killed, err := OpenWatchdogWith(r.cfg.StorageDir, r.cfg.WorkerName, RunInfo{Cluster: r.cfg.ClusterName, SharedDir: absDir(r.cfg.Shared())})
	if err != nil {
		return err
	}
	r.dog = dog
	if killed {
		r.met.killed.Inc()
		r.log.Warn("recorder_previous_run_killed", "worker", r.cfg.WorkerName, "watchdog", dog.Path())
	}
	return r.becomeOwner(ctx)
}

// becomeOwner declares the tables in the live file and writes
// worker_config; the caller holds mu or runs before start.
func (r *Recorder) becomeOwner(ctx context.Context) error {
	r.live = r.st().Backend().LivePath()
	if _, err := r.st().DeclareKinds(ctx, Kinds(), owner.WriteOptions{}); err != nil {
		if errors.Is(err, recordstore.ErrInvalid) || errors.Is(err, recordstore.ErrSchemaConflict) {
			// The file holds a table of another layout (an events table of
			// a release before origin, client_name and request_id).
			return fmt.Errorf("the recorder file %s has tables of another layout: delete it and start again (storage.dir is disposable): %w", r.live, err)
		}
		return fmt.Errorf("declare the recorder tables in %s: %w", r.live, err)
	}
	return r.writeConfig(ctx)
}

// freeLiveName returns the path of the next live file: named for t, or
// for the first later second whose name is used neither in storage.dir
// nor in the history folder, and always later than the previous live
// file's (lastStart). Two runs in one second, or rotations faster than a
// second, never share a name, and names keep the order of the files.
func (r *Recorder) freeLiveName(t time.Time) (string, error) {
	t = t.UTC().Truncate(time.Second)
	if !r.lastStart.IsZero() && !t.After(r.lastStart) {
		t = r.lastStart.Add(time.Second)
	}
	for i := 0; i < 3600; i, t = i+1, t.Add(time.Second) {
		name := dbfiles.RecorderFileName(r.cfg.WorkerName, t)
		free := true
		for _, dir := range []string{r.cfg.StorageDir, r.cfg.HistoryDir()} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				free = false
			} else if !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("stat %s: %w", filepath.Join(dir, name), err)
			}
		}
		if free {
			r.lastStart = t
			return filepath.Join(r.cfg.StorageDir, name), nil
		}
	}
	return "", fmt.Errorf("%w: no free recorder file name in the hour after %s", recordstore.ErrInvalid, t.Format(time.RFC3339))
}

// ownFiles lists this worker's recorder files in dir (any age), oldest
// first: their names sort by their start time.
func ownFiles(dir, worker string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list storage.dir %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if _, ok := dbfiles.ParseRecorderFileName(worker, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Record hands one event to the recorder. It never blocks: the event is
// filtered (see Filter) and buffered; a full buffer drops its oldest
// event (counted). In memory-only mode, and after Close, it keeps nothing.
func (r *Recorder) Record(ev Event) {
	if r.st() == nil || r.stopped.Load() || !r.filter.Admit(&ev) {
		return
	}
	r.buf.Push(ev)
}

// LiveFile is the path of the live file while this process owns the
// worker's store, else "".
func (r *Recorder) LiveFile() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live
}

// Instance is this process's instance id (16 hex), as meta files name it.
func (r *Recorder) Instance() string { return r.instance }

// Owner reports whether this process owns the worker's store (and so
// writes, rotates and seals its files).
func (r *Recorder) Owner() bool {
	st := r.st()
	return st != nil && st.Role() == owner.RoleOwner
}

// st is the worker's store; nil in memory-only mode.
func (r *Recorder) st() *records.Store { return r.store.Load() }

// BacklogFile is one file of the backlog and why it is there, as the
// worker's status shows it.
type BacklogFile struct {
	// Path is the file in storage.dir.
	Path string `json:"path"`
	// Leftover says it was found in storage.dir (an earlier process's
	// file) rather than rotated or closed by this one.
	Leftover bool `json:"leftover"`
	// Sealed says the file is sealed and waits for its move only.
	Sealed bool `json:"sealed"`
	// Reason is why it is in the backlog: "pending" (not tried yet, or
	// waiting for the next try of the background job), or the stage
	// whose last try failed: "seal", "publish" (the move into the history
	// folder) or "quarantine".
	Reason string `json:"reason"`
	// Error is the last failure's error; "" when none.
	Error string `json:"error,omitempty"`
	// FailedAt is when the last failure happened; nil when none.
	FailedAt *time.Time `json:"failed_at,omitempty"`
	// Failures counts the failed tries.
	Failures int `json:"failures"`
}

// Backlog lists the backlog (see OwnClosedFiles) with why each file is
// there, oldest first.
func (r *Recorder) Backlog() []BacklogFile {
	if r.bl == nil {
		return []BacklogFile{}
	}
	items := r.bl.items()
	out := make([]BacklogFile, 0, len(items))
	for _, it := range items {
		f := BacklogFile{Path: it.path, Leftover: it.leftover, Sealed: it.meta != nil, Reason: "pending",
			Error: it.err, Failures: it.failures}
		if it.failures > 0 {
			at := it.failedAt.UTC()
			f.Reason, f.FailedAt = it.stage, &at
		}
		out = append(out, f)
	}
	return out
}

// OwnClosedFiles lists the paths of this worker's closed own files still in
// storage.dir (the backlog: rotated, sealed or not yet, not yet moved to the
// history folder), oldest first. Empty in memory-only mode and in a process
// that does not own the worker's store.
func (r *Recorder) OwnClosedFiles() []string {
	if r.bl == nil {
		return nil
	}
	items := r.bl.items()
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.path)
	}
	return out
}
