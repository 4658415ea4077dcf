// worker: Open wires the components into one running worker, Close drains
// it in the spec's order, Run is both around a context.

package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Options configure Open beyond Config. The zero value is usable.
type Options struct {
	// Logger receives every component's log events; default: discard.
	Logger *slog.Logger
	// Now is the clock of every component; default time.Now.
	Now func() time.Time
	// Info is what worker_config says of the worker; its debug URL and
	// port default to the debug API's.
	Info recorder.WorkerInfo
	// Listener, when set, is where the debug API serves (and ui.addr is not
	// used); Close closes it.
	Listener net.Listener
	// API builds the HTTP handler from the worker's parts; default
	// DebugAPI.
	API func(APIDeps) (http.Handler, error)
	// HTTPClient makes the cache exchange's requests to peers; default a
	// client with a 10 s timeout.
	HTTPClient cache.HTTPDoer
	// Replica, when set, gives each of the worker's stores its replicator
	// and fence (recorder.Options.Replica, cache.Options.Replica); store
	// is StoreRecorder or StoreCache. A replicated recorder does not
	// rotate its live file (see recorder.Options.Replica).
	Replica func(store string) (owner.Replicator, owner.Fence, error)
}

// The names of a worker's stores, for Options.Replica.
const (
	StoreRecorder = "recorder"
	StoreCache    = "cache"
)

// replicaOf is Options.Replica for one store, nil without it.
func (o Options) replicaOf(store string) func() (owner.Replicator, owner.Fence, error) {
	if o.Replica == nil {
		return nil
	}
	return func() (owner.Replicator, owner.Fence, error) { return o.Replica(store) }
}

// APIDeps are the parts the debug API reads.
type APIDeps struct {
	// Config is the worker's configuration.
	Config Config
	// Recorder is the flight recorder (memory-only when storage.dir is
	// empty).
	Recorder *recorder.Recorder
	// Cache is the LWW cache (a no-op when its engine is off).
	Cache *cache.Cache
	// Registry is this worker's presence in the fleet registry.
	Registry *registry.Registry
	// Metrics gathers every component's metrics.
	Metrics prometheus.Gatherer
	// Ready lists why the worker is not ready; empty when it is.
	Ready func() []string
	// Logger is the worker's logger.
	Logger *slog.Logger
	// Now is the worker's clock.
	Now func() time.Time
	// URL is the debug API's base URL, as the registry card has it.
	URL string
}

// Worker is one running Drakkar worker. Its methods are safe for
// concurrent use.
type Worker struct {
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	prom *prometheus.Registry

	rec   *recorder.Recorder
	cache *cache.Cache
	// cardCache is cache once open: the registry's heartbeat reads it for
	// the card's features while Open is still running.
	cardCache atomic.Pointer[cache.Cache]
	reg       *registry.Registry
	// peerReg is reg once open: the cache's pull, started before the
	// registry, reads the peers through it.
	peerReg atomic.Pointer[registry.Registry]
	ln      net.Listener
	srv     *http.Server
	url     string

	// archivePass is the archive pass run after each rotation; nil until
	// Open knows the recorder's instance id, and when archiving is off.
	archivePass atomic.Pointer[func(context.Context)]
	closing     atomic.Bool
	served      chan error
	closeOnce   sync.Once
	closeErr    error
}

// Open starts a worker: it validates cfg, binds the debug API's address
// (refusing, with ErrConfig and before anything is created, an address
// off the loopback without ui.auth_token unless ui.insecure_listen),
// opens the recorder (with the archive pass after each rotation when
// history.archive.enabled), the cache with its exchange pull, the
// registry card (whose url is the debug API's, whose features are the
// cache's from the first card on), registers every
// component's metrics on one Prometheus registry, and serves the debug API.
// On error everything opened is closed again; storage.dir, the history
// folder, a sealed first live file and a stopped card may have been
// created.
func Open(ctx context.Context, cfg Config, opts Options) (_ *Worker, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, log: opts.Logger, now: opts.Now, served: make(chan error, 1)}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.prom = prometheus.NewRegistry()
	w.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	defer func() {
		if err != nil {
			w.abort()
		}
	}()
	if err := w.listen(opts.Listener); err != nil {
		return nil, err
	}
	if err := w.openRecorder(ctx, opts.Info, opts.replicaOf(StoreRecorder)); err != nil {
		return nil, err
	}
	// The cache opens first so the first card carries its features; its
	// pull reads the registry's peers once the registry is open.
	if err := w.openCache(ctx, opts.HTTPClient, opts.replicaOf(StoreCache)); err != nil {
		return nil, err
	}
	if err := w.openRegistry(ctx); err != nil {
		return nil, err
	}
	if err := w.serve(opts.API); err != nil {
		return nil, err
	}
	return w, nil
}

// listen binds the debug API's address and derives the card's URL.
func (w *Worker) listen(ln net.Listener) error {
	addr := w.cfg.UI.Addr
	if ln != nil {
		addr = ln.Addr().String()
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", w.cfg.UI.Addr); err != nil {
			return fmt.Errorf("listen on ui.addr %s: %w", w.cfg.UI.Addr, err)
		}
	}
	w.ln = ln
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		// The spec's security notes: the debug API serves recorder files
		// and the live database; off the loopback it needs a token.
		if w.cfg.UI.AuthToken == "" && !w.cfg.UI.InsecureListen {
			_ = ln.Close()
			w.ln = nil
			return recordstore.Errorf(ErrConfig, "ui.addr %s (bound to %s) is not a loopback address and ui.auth_token is empty: anyone "+
				"who reaches it could download the recorder's files; set ui.auth_token, listen on 127.0.0.1, or set "+
				"ui.insecure_listen (--insecure-listen) if that is meant", addr, tcp.String())
		}
		w.log.Warn("debug_api_non_loopback", "addr", tcp.String(), "auth_token_set", w.cfg.UI.AuthToken != "")
	}
	w.url = w.cfg.UI.URL
	if w.url == "" {
		w.url = "http://" + advertised(ln.Addr())
	}
	return nil
}

// advertised is the host:port peers reach a listener at: its address, or
// for an unspecified one (0.0.0.0, ::) this host's name, since peers
// cannot dial "0.0.0.0". Set ui.url when that name is not right.
func advertised(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// openRecorder opens the flight recorder, then arms the archive pass with
// its instance id (the pass's lock body and clock marker name it).
func (w *Worker) openRecorder(ctx context.Context, info recorder.WorkerInfo, rep func() (owner.Replicator, owner.Fence, error)) error {
	if info.DebugURL == "" {
		info.DebugURL = w.url
	}
	if tcp, ok := w.ln.Addr().(*net.TCPAddr); ok && info.DebugPort == 0 {
		info.DebugPort = tcp.Port
		if info.IPAddress == "" {
			info.IPAddress = tcp.IP.String()
		}
	}
	rec, err := recorder.Open(ctx, w.cfg.Recorder, recorder.Options{
		Logger: w.log, Registerer: w.prom, Now: w.now, Info: info,
		AfterRotate: w.afterRotate, Replica: rep,
	})
	if err != nil {
		return fmt.Errorf("open recorder: %w", err)
	}
	w.rec = rec
	metrics := archive.NewMetrics(w.prom)
	if !w.cfg.Recorder.WritesFiles() {
		return nil
	}
	archive.LogStart(w.log, w.cfg.Archive, w.cfg.Recorder.HistoryDir())
	if w.cfg.Archive.Enabled {
		pass := archive.AfterRotate(w.cfg.Archive, archive.Options{
			Shared: w.cfg.Recorder.Shared(), Cluster: w.cfg.Recorder.ClusterName,
			Worker: w.cfg.Recorder.WorkerName, Instance: rec.Instance(),
			Logger: w.log, Metrics: metrics,
		})
		w.archivePass.Store(&pass)
	}
	return nil
}

// afterRotate is the recorder's AfterRotate: the archive pass once armed.
func (w *Worker) afterRotate(ctx context.Context) {
	if pass := w.archivePass.Load(); pass != nil {
		(*pass)(ctx)
	}
}

// openRegistry publishes this worker's card; none when neither shared.dir
// nor storage.dir is set (nowhere to write it).
func (w *Worker) openRegistry(ctx context.Context) error {
	r := w.cfg.Recorder
	if r.SharedDir == "" && r.StorageDir == "" {
		return nil
	}
	reg, err := registry.Open(ctx, registry.Options{
		Dir: registry.Dir(r.SharedDir, r.StorageDir), Worker: r.WorkerName, Cluster: r.ClusterName,
		URL: w.url, Instance: w.rec.Instance(),
		Heartbeat: w.cfg.Registry.Heartbeat, Refresh: w.cfg.Registry.Refresh,
		OfflineAfter: w.cfg.Registry.OfflineAfter,
		Features:     w.features, Now: w.now, Logger: w.log,
	})
	if err != nil && refusesWrites(err) {
		// A shared.dir that takes no writes (a read-only mount, no
		// permission) does not stop the worker: it records locally and
		// its recorder keeps the closed files in its backlog until the
		// history folder takes writes. It runs without a card until its
		// next start: peers do not see it, and it pulls no peer.
		w.log.Warn("registry_unavailable", "folder", registry.Dir(r.SharedDir, r.StorageDir), "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("open registry: %w", err)
	}
	w.reg = reg
	w.peerReg.Store(reg)
	return nil
}

// refusesWrites reports whether err says a folder takes no writes: a
// read-only file system or a permission refused.
func refusesWrites(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// peers are the registry's last snapshot of the other workers; none
// before the registry is open. It is the cache pull's PeerLister.
func (w *Worker) peers() []registry.Peer {
	if r := w.peerReg.Load(); r != nil {
		return r.Peers()
	}
	return nil
}

// peerLister adapts Worker.peers to cache.PeerLister.
type peerLister struct{ w *Worker }

// Peers implements cache.PeerLister.
func (p peerLister) Peers() []registry.Peer { return p.w.peers() }

// features are the card's features: the cache's marks once it runs.
func (w *Worker) features() registry.Features {
	if c := w.cardCache.Load(); c != nil {
		return c.CardFeatures()
	}
	return registry.Features{}
}

// openCache opens the cache; it pulls the peers the registry lists.
func (w *Worker) openCache(ctx context.Context, client cache.HTTPDoer, rep func() (owner.Replicator, owner.Fence, error)) error {
	opts := cache.Options{Logger: w.log, Registerer: w.prom, Now: w.now, HTTPClient: client, Replica: rep}
	if r := w.cfg.Recorder; r.SharedDir != "" || r.StorageDir != "" {
		// openRegistry will open a registry (see there).
		opts.Peers = peerLister{w}
	}
	c, err := cache.Open(ctx, w.cfg.Cache, opts)
	if err != nil {
		return fmt.Errorf("open cache: %w", err)
	}
	w.cache = c
	w.cardCache.Store(c)
	return nil
}

// serve builds the debug API and serves it in the background.
func (w *Worker) serve(api func(APIDeps) (http.Handler, error)) error {
	if api == nil {
		api = DebugAPI
	}
	h, err := api(APIDeps{Config: w.cfg, Recorder: w.rec, Cache: w.cache, Registry: w.reg,
		Metrics: w.prom, Ready: w.Ready, Logger: w.log, Now: w.now, URL: w.url})
	if err != nil {
		return fmt.Errorf("build debug api: %w", err)
	}
	w.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(w.log.Handler(), slog.LevelWarn)}
	w.log.Info("listening", "addr", w.ln.Addr().String(), "url", w.url)
	go func() { w.served <- w.srv.Serve(w.ln) }()
	return nil
}

// Record hands one event to the flight recorder; it never blocks.
func (w *Worker) Record(ev recorder.Event) { w.rec.Record(ev) }

// Recorder is the worker's flight recorder.
func (w *Worker) Recorder() *recorder.Recorder { return w.rec }

// Cache is the worker's LWW cache (Get, Set, Delete); a no-op when its
// engine is off.
func (w *Worker) Cache() *cache.Cache { return w.cache }

// Registry is the worker's registry presence; nil when there is no folder
// for cards (no storage.dir and no shared.dir).
func (w *Worker) Registry() *registry.Registry { return w.reg }

// Gatherer gathers the metrics of every component.
func (w *Worker) Gatherer() prometheus.Gatherer { return w.prom }

// Addr is the address the debug API is bound to.
func (w *Worker) Addr() net.Addr { return w.ln.Addr() }

// URL is the debug API's base URL, as the registry card has it.
func (w *Worker) URL() string { return w.url }

// Ready lists why the worker is not ready, for /readyz: "stopping" once
// Close began, "not_owner" when another process owns this worker name's
// recorder (two workers configured with one name and one storage.dir),
// "duplicate_worker" when another live process of this worker name holds
// its registry card (one name on one shared folder; see
// registry.Registry.Duplicate). Empty means ready.
func (w *Worker) Ready() []string {
	if w.closing.Load() {
		return []string{"stopping"}
	}
	var out []string
	if w.cfg.Recorder.WritesFiles() && !w.rec.Owner() {
		out = append(out, "not_owner")
	}
	if w.reg != nil && w.reg.Duplicate() != nil {
		out = append(out, "duplicate_worker")
	}
	return out
}

// Close stops the worker cleanly, within executor.drain_timeout_seconds
// (and ctx): the debug API stops taking requests and lets those in flight
// finish; the cache flushes and closes; the recorder flushes, seals its
// live file (always) and moves it with its backlog into the history folder
// while time remains; last the registry card is marked stopped. The steps
// that must happen (cache flush, seal, card) are not cut short by the
// drain deadline; only the move is. What is on disk when it returns an
// error: each step ran; a file not moved stays in storage.dir and the next
// start moves it as a leftover. Close is idempotent.
func (w *Worker) Close(ctx context.Context) error {
	w.closeOnce.Do(func() { w.closeErr = w.drain(ctx) })
	return w.closeErr
}

func (w *Worker) drain(ctx context.Context) error {
	w.closing.Store(true)
	start := w.now()
	dctx, cancel := context.WithTimeout(ctx, w.cfg.DrainTimeout)
	defer cancel()
	must := context.WithoutCancel(ctx)
	var errs []error
	if err := w.srv.Shutdown(dctx); err != nil {
		// Requests still running when the drain time is up are cut: a
		// clean stop goes on (the spec's drain is bounded, not an error).
		w.log.Warn("debug_api_requests_cut", "err", err)
		_ = w.srv.Close()
	}
	if err := <-w.served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serve debug api: %w", err))
	}
	if err := w.cache.Close(must); err != nil {
		errs = append(errs, fmt.Errorf("close cache: %w", err))
	}
	// The final flush must not depend on the drain time left: the
	// recorder's Close bounds its whole run by its ctx, so flush first
	// without a deadline and let the deadline bound the move.
	if err := w.rec.Flush(must); err != nil {
		errs = append(errs, fmt.Errorf("final flush: %w", err))
	}
	if err := w.rec.Close(dctx); err != nil {
		errs = append(errs, fmt.Errorf("close recorder: %w", err))
	}
	if w.reg != nil {
		if err := w.reg.Close(must); err != nil {
			errs = append(errs, fmt.Errorf("close registry: %w", err))
		}
	}
	w.log.Info("worker_stopped", "took_ms", w.now().Sub(start).Milliseconds())
	return errors.Join(errs...)
}

// abort closes what a failed Open had opened.
func (w *Worker) abort() {
	ctx := context.Background()
	if w.cache != nil {
		_ = w.cache.Close(ctx)
	}
	if w.rec != nil {
		_ = w.rec.Close(ctx)
	}
	if w.reg != nil {
		_ = w.reg.Close(ctx)
	}
	if w.ln != nil {
		_ = w.ln.Close()
	}
}

// Run opens a worker, serves until ctx ends (or the debug API fails) and
// closes it, draining within executor.drain_timeout_seconds. It returns
// nil after a clean stop.
func Run(ctx context.Context, cfg Config, opts Options) error {
	w, err := Open(ctx, cfg, opts)
	if err != nil {
		return err
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-w.served:
		w.served <- serveErr
	}
	w.log.Info("shutting down")
	return errors.Join(w.Close(context.WithoutCancel(ctx)), serveErr)
}
