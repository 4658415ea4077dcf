// The Registry: publishing this worker's card, reading the peers' cards,
// and their liveness on the file server's clock.

package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// The spec's defaults.
const (
	DefaultHeartbeat    = 10 * time.Second
	DefaultRefresh      = 10 * time.Second
	DefaultOfflineAfter = 30 * time.Second
)

// Options configure Open.
type Options struct {
	// Dir is the cards' folder (see Dir); created 0700 when missing.
	Dir string
	// Worker, Cluster and URL go on the card.
	Worker, Cluster, URL string
	// Instance is the process's 16 hex id; default a new one.
	Instance string
	// Heartbeat is fleet.registry.heartbeat_seconds (10).
	Heartbeat time.Duration
	// Refresh is fleet.registry.refresh_seconds (10).
	Refresh time.Duration
	// OfflineAfter is fleet.registry.offline_after_seconds (30).
	OfflineAfter time.Duration
	// Features gives the card's features at each publish; nil: none.
	Features func() Features
	// Now is the worker's clock for the card's times; default time.Now.
	Now func() time.Time
	// Logger receives registry_publish_failed and registry_refresh_failed.
	Logger *slog.Logger
	// NoLoops turns the heartbeat and refresh loops off (tests call
	// Publish and Refresh themselves).
	NoLoops bool
}

// Peer is another worker as its card and its age tell.
type Peer struct {
	Worker   string `json:"worker"`
	Instance string `json:"instance"`
	Cluster  string `json:"cluster"`
	URL      string `json:"url"`
	// Online is true while the card is no older than OfflineAfter on the
	// file server's clock and its state is running.
	Online bool `json:"online"`
	// State is the card's state: running or stopped.
	State string `json:"state"`
	// LastSeen is the card's modification time (the file server's clock).
	LastSeen time.Time `json:"last_seen"`
	// Age is the card's age on the file server's clock.
	Age time.Duration `json:"age_ns"`
	// Features are the card's features.
	Features Features `json:"-"`
}

// Registry is one worker's presence in the registry.
type Registry struct {
	opts    Options
	log     *slog.Logger
	started time.Time

	mu    sync.Mutex
	peers []Peer // guarded by mu: the last refresh's snapshot

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open checks opts, creates the folder (0700), publishes the card and
// reads the peers once, then (unless NoLoops) publishes every Heartbeat
// and refreshes every Refresh until Close. A failing first publish or
// refresh is returned and nothing keeps running.
func Open(ctx context.Context, opts Options) (*Registry, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("%w: no folder", ErrConfig)
	}
	if opts.Worker == "" || strings.ContainsAny(opts.Worker, "/\\\x00") || strings.HasPrefix(opts.Worker, ".") {
		return nil, fmt.Errorf("%w: worker name %q", ErrConfig, opts.Worker)
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Refresh == 0 {
		opts.Refresh = DefaultRefresh
	}
	if opts.OfflineAfter == 0 {
		opts.OfflineAfter = DefaultOfflineAfter
	}
	if opts.Heartbeat < 0 || opts.Refresh < 0 || opts.OfflineAfter < 0 {
		return nil, fmt.Errorf("%w: intervals must be positive", ErrConfig)
	}
	if opts.Instance == "" {
		opts.Instance = dbfiles.NewHex16()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Registry{opts: opts, log: opts.Logger, started: opts.Now()}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := fsutil.MkdirAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("create the registry folder %s: %w", opts.Dir, err)
	}
	if err := r.Publish(ctx); err != nil {
		return nil, err
	}
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	if !opts.NoLoops {
		r.loop(opts.Heartbeat, "registry_publish_failed", r.Publish)
		r.loop(opts.Refresh, "registry_refresh_failed", r.Refresh)
	}
	return r, nil
}

func (r *Registry) loop(every time.Duration, event string, run func(context.Context) error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
				if err := run(r.ctx); err != nil {
					r.log.Warn(event, "error", err)
				}
			}
		}
	}()
}

// Instance is this process's instance id.
func (r *Registry) Instance() string { return r.opts.Instance }

// CardPath is this worker's card.
func (r *Registry) CardPath() string { return filepath.Join(r.opts.Dir, FileName(r.opts.Worker)) }

// Publish writes this worker's card now (state running). On error the
// previous card is unchanged.
func (r *Registry) Publish(ctx context.Context) error { return r.publish(StateRunning) }

func (r *Registry) publish(state string) error {
	c := Card{Version: CardVersion, Worker: r.opts.Worker, Instance: r.opts.Instance, Cluster: r.opts.Cluster,
		URL: r.opts.URL, StartedAt: r.started, PublishedAt: r.opts.Now(), State: state}
	if r.opts.Features != nil {
		c.Features = r.opts.Features()
	}
	b, err := c.Encode()
	if err != nil {
		return fmt.Errorf("encode the card of %s: %w", r.opts.Worker, err)
	}
	if err := fsutil.WriteFile(r.CardPath(), b, fsutil.FileMode); err != nil {
		return fmt.Errorf("publish the card of %s: %w", r.opts.Worker, err)
	}
	return nil
}

// Refresh reads the peers' cards now and replaces the snapshot.
func (r *Registry) Refresh(ctx context.Context) error {
	peers, err := ReadPeers(ctx, r.opts.Dir, r.opts.Instance, r.opts.OfflineAfter, r.log)
	if err != nil {
		return err
	}
	out := peers[:0]
	for _, p := range peers {
		if p.Worker != r.opts.Worker {
			out = append(out, p)
		}
	}
	r.mu.Lock()
	r.peers = out
	r.mu.Unlock()
	return nil
}

// Peers returns the last refresh's snapshot of the other workers, sorted
// by name.
func (r *Registry) Peers() []Peer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Peer(nil), r.peers...)
}

// Close stops the loops, publishes a card whose state is stopped, and
// removes this process's clock marker. The card stays (a stopped worker
// is listed as offline).
func (r *Registry) Close(ctx context.Context) error {
	r.cancel()
	r.wg.Wait()
	err := r.publish(StateStopped)
	if rmErr := os.Remove(ClockPath(r.opts.Dir, r.opts.Instance)); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	return err
}

// ClockPath is the clock marker of instance in dir.
func ClockPath(dir, instance string) string { return filepath.Join(dir, ".clock."+instance) }

// ServerNow touches the clock marker of instance in dir (mode 0600) and
// returns its modification time: "now" on the file server's clock.
func ServerNow(dir, instance string) (time.Time, error) {
	p := ClockPath(dir, instance)
	if err := os.WriteFile(p, nil, fsutil.FileMode); err != nil {
		return time.Time{}, fmt.Errorf("touch the clock marker %s: %w", p, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}, fmt.Errorf("stat the clock marker %s: %w", p, err)
	}
	return fi.ModTime(), nil
}

// ReadPeers reads every card in dir (names <worker>.json; dot files and
// others are skipped; an unreadable card, or one naming another worker
// than its file, is logged as registry_bad_card and skipped) and judges
// each online on the file server's clock, measured through instance's
// marker. Sorted by worker.
func ReadPeers(ctx context.Context, dir, instance string, offlineAfter time.Duration, log *slog.Logger) ([]Peer, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the registry folder %s: %w", dir, err)
	}
	now, err := ServerNow(dir, instance)
	if err != nil {
		return nil, err
	}
	var out []Peer
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		p, err := readPeer(filepath.Join(dir, name), now, offlineAfter)
		if err != nil {
			log.Warn("registry_bad_card", "card", name, "error", err)
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Worker < out[j].Worker })
	return out, nil
}

// readPeer reads one card and judges it at now.
func readPeer(path string, now time.Time, offlineAfter time.Duration) (Peer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Peer{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Peer{}, err
	}
	c, err := DecodeCard(b)
	if err != nil {
		return Peer{}, err
	}
	if FileName(c.Worker) != filepath.Base(path) {
		return Peer{}, fmt.Errorf("%w: the card names worker %q", ErrBadCard, c.Worker)
	}
	age := now.Sub(fi.ModTime())
	if age < 0 {
		age = 0
	}
	return Peer{Worker: c.Worker, Instance: c.Instance, Cluster: c.Cluster, URL: c.URL, State: c.State,
		Online: c.State == StateRunning && age <= offlineAfter, LastSeen: fi.ModTime(), Age: age, Features: c.Features}, nil
}

// RemoveClock removes the clock marker of instance in dir (a short-lived
// reader of the cards, such as a command, leaves none behind).
func RemoveClock(dir, instance string) error {
	if err := os.Remove(ClockPath(dir, instance)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
