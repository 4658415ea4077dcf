// Pass: one archive pass over a cluster's history folder — refresh the
// metrics, take the lock, sweep, archive every due window, expire, release.

package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
)

// DefaultRefreshEvery is how often the holder refreshes the lock's
// modification time (the spec's 60 seconds).
const DefaultRefreshEvery = 60 * time.Second

// Failpoints, the names given to Options.Failpoint.
const (
	FailAfterLock    = "after-lock"    // the lock is held, nothing else done
	FailAfterGzip    = "after-gzip"    // the compressed work file is durable, nothing published
	FailAfterPublish = "after-publish" // the archive is durable at its final name, no source deleted
	FailMidDeletes   = "mid-deletes"   // half of the window's sources are deleted
	// FailTakeoverMoved: a takeover has moved the lock aside and not yet
	// looked at what it moved.
	FailTakeoverMoved = "takeover-moved"
)

// Options are what a pass needs besides the configuration.
type Options struct {
	// Shared is shared.dir; the pass works in <Shared>/history/<cluster>
	// and prunes <Shared>/merged. Required.
	Shared string
	// Cluster is cluster.name as configured (the folder name is its
	// sanitized form). Required.
	Cluster string
	// Worker is worker.name, written into the lock body.
	Worker string
	// Instance is this process's 16-hex instance id (the lock body, the
	// clock marker's name); "" makes a new one.
	Instance string
	// Logger receives the spec's log events; nil discards them.
	Logger *slog.Logger
	// Metrics are updated by the pass; nil uses unregistered ones.
	Metrics *Metrics
	// Clock is "now" for ages and due windows; nil is FileServerClock.
	Clock Clock
	// RefreshEvery replaces DefaultRefreshEvery (tests).
	RefreshEvery time.Duration
	// Failpoint, when set, is called with each Fail* name as the pass
	// reaches it (crash tests kill the process there).
	Failpoint func(name string)
	// OnEvent, when set, is called with every Event of the pass.
	OnEvent func(Event)
	// MergeCacheKiB is the merge's page cache (merge.Options.CacheKiB).
	MergeCacheKiB int
}

// Report is what a pass did, as JSON for `query drakkar archive`.
type Report struct {
	// Folder is the history folder of the pass.
	Folder string `json:"folder"`
	// Token is the pass's lock token.
	Token string `json:"token"`
	// Locked says whether the pass took the lock; false: another pass
	// held it (or archiving is off) and nothing else was done.
	Locked bool `json:"locked"`
	// Fenced says the lock was taken over during the pass: from then on
	// it published nothing and deleted nothing.
	Fenced bool `json:"fenced"`
	// Stopped says the context ended: the windows left and expiry were
	// skipped.
	Stopped bool `json:"stopped"`
	// Published lists the archives written, one per window.
	Published []Published `json:"published"`
	// Deleted lists the sources deleted (with their meta files).
	Deleted []string `json:"deleted"`
	// SetAside lists the sources renamed <name>.unreadable.
	SetAside []string `json:"set_aside"`
	// Swept lists the work files the sweep deleted.
	Swept []string `json:"swept"`
	// Expired lists the archives deleted by retention_days.
	Expired []string `json:"expired"`
	// Pruned lists the merge results deleted by merged_retention_days.
	Pruned []string `json:"pruned"`
	// Failed lists the windows that failed, with why.
	Failed []Failed `json:"failed"`
	// ArchiveFiles and ArchiveBytes are the archives in the folder (the
	// metrics' values): counted again when a pass that held the lock
	// ends, so they include what it published and expired; counted before
	// the lock was tried when it did not take it.
	ArchiveFiles int   `json:"archive_files"`
	ArchiveBytes int64 `json:"archive_bytes"`
	// Holder is the pass that held a fresh lock when this one did not
	// take it; nil otherwise (or when its lock could not be read).
	Holder *Holder `json:"holder,omitempty"`
	// NextDue is when the next window becomes due, as the pass saw it
	// after the due ones: the earliest not-yet-due window that holds a
	// sealed file, else the window of "now". Nil when the pass did not
	// list the windows (no lock, archiving off, no history folder).
	NextDue *time.Time `json:"next_due,omitempty"`
}

// Holder is the lock body of another pass, as a report shows it.
type Holder struct {
	Worker     string    `json:"worker"`
	Instance   string    `json:"instance"`
	Token      string    `json:"token"`
	AcquiredAt time.Time `json:"acquired_at"`
}

// Err returns nil when every due window the pass tried was published, else
// an error wrapping ErrNotArchived that names the first failed window and
// why (a command exits non-zero with it).
func (r Report) Err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	return recordstore.Errorf(ErrNotArchived, "%d window(s), first %s: %s", len(r.Failed), r.Failed[0].Archive, r.Failed[0].Error)
}

// Published is one archive written by a pass.
type Published struct {
	Archive string `json:"archive"`
	Window  Window `json:"window"`
	// Sources is how many sealed files were merged into it.
	Sources int `json:"sources"`
	// Folded says an archive already at the final name was folded in.
	Folded bool `json:"folded"`
	// Events is the archive's event count; SizeBytes its compressed size.
	Events    int64 `json:"events"`
	SizeBytes int64 `json:"size_bytes"`
}

// Failed is one window that failed.
type Failed struct {
	Archive string `json:"archive"`
	Error   string `json:"error"`
}

// pass is one run of Pass.
type pass struct {
	cfg     Config
	opts    Options
	dir     string
	cluster string
	log     *slog.Logger
	met     *Metrics
	lk      *lock
	rep     *Report
	now     time.Time
}

// Pass runs one archive pass for the cluster's history folder and returns
// what it did. With archiving off, or the lock held by another pass, it
// does nothing but refresh the metrics. A context that ends stops the
// pass after the window in progress (which finishes on its own) and skips
// expiry; the windows left stay due.
//
// What is on disk when it returns: every archive it published is durable
// at its final name before any of its sources was deleted; a window that
// failed left its sources untouched; work files of this pass are removed
// (a crash leaves them for the sweep of a later pass). An error is
// returned for bad options or configuration (ErrOptions, ErrConfig:
// nothing touched), or for a failure outside a window (the lock cannot be
// created, the folder cannot be listed); a window's failure is in
// Report.Failed, not an error.
//
// Every pass that got past its options is kept as the folder's last
// outcome (LastOutcome).
func Pass(ctx context.Context, cfg Config, opts Options) (Report, error) {
	p, err := newPass(cfg, opts)
	if err != nil {
		return Report{}, err
	}
	rep, err := p.run(ctx)
	keepOutcome(p.dir, rep, err)
	return rep, err
}

// run is Pass after the options were checked.
func (p *pass) run(ctx context.Context) (Report, error) {
	cfg := p.cfg
	if !cfg.Enabled {
		return *p.rep, nil
	}
	if _, err := os.Stat(p.dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return *p.rep, nil // no history yet
		}
		return *p.rep, fmt.Errorf("history folder: %w", err)
	}
	p.refreshMetrics()
	defer p.removeClock()
	ok, err := p.lk.acquire(ctx)
	if err == nil && !ok {
		p.rep.Holder = p.readHolder()
	}
	if err != nil || !ok {
		return *p.rep, err
	}
	p.rep.Locked = true
	p.emit(Event{Kind: EventLocked})
	err = p.locked(ctx)
	// The pass's hold ends before the lock is deleted: another pass may
	// create its own the moment it is gone.
	releasing := time.Now()
	if !p.lk.release() {
		p.rep.Fenced = true
	}
	if err != nil || p.rep.Fenced || len(p.rep.Failed) > 0 {
		p.met.Failures.Inc()
	}
	p.emit(Event{Kind: EventReleased, Fenced: p.rep.Fenced, At: releasing})
	p.refreshMetrics()
	return *p.rep, err
}

// readHolder reads the lock another pass holds; nil when it is gone or
// unreadable.
func (p *pass) readHolder() *Holder {
	b, err := os.ReadFile(p.lk.path)
	if err != nil {
		return nil
	}
	body, err := dbfiles.DecodeLock(b)
	if err != nil {
		return nil
	}
	return &Holder{Worker: body.Worker, Instance: body.Instance, Token: body.Token, AcquiredAt: body.AcquiredAt}
}

// newPass checks the arguments and fills the defaults.
func newPass(cfg Config, opts Options) (*pass, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Shared == "" {
		return nil, recordstore.Errorf(ErrOptions, "the shared folder is required")
	}
	if err := dbfiles.ClusterNameProblem(opts.Cluster); err != nil {
		return nil, recordstore.Errorf(ErrOptions, "cluster %s", err)
	}
	if opts.Instance == "" {
		opts.Instance = dbfiles.NewHex16()
	}
	if !dbfiles.IsHex16(opts.Instance) {
		return nil, recordstore.Errorf(ErrOptions, "instance must be 16 lowercase hex, got %q", opts.Instance)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.Clock == nil {
		opts.Clock = FileServerClock(opts.Instance)
	}
	if opts.RefreshEvery <= 0 {
		opts.RefreshEvery = DefaultRefreshEvery
	}
	p := &pass{
		cfg:     cfg,
		opts:    opts,
		dir:     dbfiles.HistoryDir(opts.Shared, opts.Cluster),
		cluster: dbfiles.SanitizeCluster(opts.Cluster),
		met:     opts.Metrics,
	}
	p.log = opts.Logger.With("folder", p.dir)
	p.rep = &Report{Folder: p.dir, Token: dbfiles.NewHex16(), Published: []Published{}, Deleted: []string{},
		SetAside: []string{}, Swept: []string{}, Expired: []string{}, Pruned: []string{}, Failed: []Failed{}}
	body := dbfiles.LockBody{Instance: opts.Instance, Token: p.rep.Token, Worker: opts.Worker}
	p.lk = &lock{dir: p.dir, path: filepath.Join(p.dir, dbfiles.ArchiveLockName), body: body,
		stale: cfg.LockStale, clock: opts.Clock, log: p.log, emit: p.emit, failpoint: p.failpoint}
	return p, nil
}

// locked is the pass with the lock held: refresh it, sweep, archive the
// due windows, expire.
func (p *pass) locked(ctx context.Context) error {
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go p.lk.refresh(rctx, p.opts.RefreshEvery)
	p.failpoint(FailAfterLock)
	now, err := p.opts.Clock(ctx, p.dir)
	if err != nil {
		return err
	}
	p.now = now
	if err := p.sweep(); err != nil {
		return err
	}
	windows, err := p.dueWindows()
	if err != nil {
		return err
	}
	for _, w := range windows {
		if ctx.Err() != nil {
			p.rep.Stopped = true
			return nil
		}
		if p.lk.isFenced() {
			return nil
		}
		// The window in progress finishes even when the worker stops.
		p.archiveWindow(context.WithoutCancel(ctx), w)
	}
	if ctx.Err() != nil {
		p.rep.Stopped = true
		return nil
	}
	if p.lk.isFenced() {
		return nil
	}
	return p.expire()
}

// dueWindow is one due window and its sources (base names, sorted).
type dueWindow struct {
	Window
	sources []string
}

// dueWindows groups the folder's sealed files by window and returns the
// due ones, oldest first.
func (p *pass) dueWindows() ([]dueWindow, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("list history folder: %w", err)
	}
	byFrom := map[int64]*dueWindow{}
	next := WindowOf(p.now, p.cfg.Window).To.Add(p.cfg.DueAfter)
	for _, e := range ents {
		start, ok := FileStart(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		w := WindowOf(start, p.cfg.Window)
		if !w.Due(p.now, p.cfg.DueAfter) {
			if at := w.To.Add(p.cfg.DueAfter); at.Before(next) {
				next = at
			}
			continue
		}
		dw := byFrom[w.From.Unix()]
		if dw == nil {
			dw = &dueWindow{Window: w}
			byFrom[w.From.Unix()] = dw
		}
		dw.sources = append(dw.sources, e.Name())
	}
	out := make([]dueWindow, 0, len(byFrom))
	for _, dw := range byFrom {
		slices.Sort(dw.sources)
		out = append(out, *dw)
	}
	slices.SortFunc(out, func(a, b dueWindow) int { return a.From.Compare(b.From) })
	next = next.UTC()
	p.rep.NextDue = &next
	return out, nil
}

// refreshMetrics counts the folder's archives into the gauges and the
// report.
func (p *pass) refreshMetrics() {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return
	}
	var n int
	var size int64
	for _, e := range ents {
		if cluster, _, _, ok := dbfiles.ParseArchiveName(e.Name()); !ok || cluster != p.cluster {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n++
			size += fi.Size()
		}
	}
	p.met.Files.Set(float64(n))
	p.met.Bytes.Set(float64(size))
	p.rep.ArchiveFiles, p.rep.ArchiveBytes = n, size
}

func (p *pass) emit(e Event) {
	if p.opts.OnEvent == nil {
		return
	}
	e.Token = p.rep.Token
	if e.At.IsZero() {
		e.At = time.Now()
	}
	p.opts.OnEvent(e)
}

func (p *pass) failpoint(name string) {
	if p.opts.Failpoint != nil {
		p.opts.Failpoint(name)
	}
}

// removeClock removes this process's clock marker.
func (p *pass) removeClock() {
	_ = os.Remove(filepath.Join(p.dir, ClockPrefix+p.opts.Instance))
}

// LogStart logs the spec's start-up lines for cfg: recorder_archiving_disabled
// (field folder: the history folder) when archiving is off, and
// recorder_archives_unbounded when retention_days is 0.
func LogStart(log *slog.Logger, cfg Config, folder string) {
	if !cfg.Enabled {
		log.Warn("recorder_archiving_disabled", "folder", folder)
		return
	}
	if cfg.Retention == 0 {
		log.Warn("recorder_archives_unbounded", "folder", folder)
	}
}

// AfterRotate returns the function a worker sets as
// recorder.Options.AfterRotate: it runs one Pass with cfg and opts (a
// disabled configuration does nothing) and logs an unexpected error as
// recorder_background_job_failed with job "archive_pass"; the next
// rotation tick runs the pass again.
func AfterRotate(cfg Config, opts Options) func(ctx context.Context) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return func(ctx context.Context) {
		if !cfg.Enabled {
			return
		}
		if _, err := Pass(ctx, cfg, opts); err != nil && ctx.Err() == nil {
			log.Warn("recorder_background_job_failed", "job", "archive_pass", "error", err)
		}
	}
}
