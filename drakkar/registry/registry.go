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
	"github.com/fb46ecde/records/recordstore"
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
	// mtime is the card's modification time as read (LastSeen is clamped
	// to the file server's now).
	mtime time.Time
}

// Registry is one worker's presence in the registry.
type Registry struct {
	opts    Options
	log     *slog.Logger
	started time.Time

	mu    sync.Mutex
	peers []Peer // guarded by mu: the last refresh's snapshot
	// held is true once this process wrote its card, until another live
	// instance's card wins it (guarded by mu).
	held bool
	// dup is the live card of another instance of this worker name that
	// keeps this process from publishing; nil when there is none (guarded
	// by mu).
	dup *Card
	// seen remembers, per card file, the modification time last read and
	// when (on the file server's clock) it was first read: a card whose
	// time does not move ages from then, even when the time is in the
	// future (guarded by mu).
	seen map[string]seenMark

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
		return nil, recordstore.Errorf(ErrConfig, "no folder")
	}
	if opts.Worker == "" || strings.ContainsAny(opts.Worker, "/\\\x00") || strings.HasPrefix(opts.Worker, ".") {
		return nil, recordstore.Errorf(ErrConfig, "worker name %q", opts.Worker)
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
		return nil, recordstore.Errorf(ErrConfig, "intervals must be positive")
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
	r := &Registry{opts: opts, log: opts.Logger, started: opts.Now(), seen: map[string]seenMark{}}
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

// Duplicate is the card of another live instance of this worker name
// that keeps this process from publishing its own card (two processes
// started with one worker.name on one shared folder); nil when this
// process holds the worker's card.
func (r *Registry) Duplicate() *Card {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dup == nil {
		return nil
	}
	c := *r.dup
	return &c
}

// Publish writes this worker's card now (state running), unless the card
// on disk is another instance's, running and fresh (no older than
// OfflineAfter): then it leaves that card alone, Duplicate reports it and
// the event registry_duplicate_worker is logged (error level) when it
// first shows. A process that already held the card keeps it against such
// a card only when its instance id is the smaller of the two, so two
// processes that published at once settle on one card. On error the
// previous card is unchanged.
func (r *Registry) Publish(ctx context.Context) error {
	other, err := r.liveForeignCard()
	if err != nil {
		return err
	}
	r.mu.Lock()
	if other != nil && (!r.held || other.Instance < r.opts.Instance) {
		first := r.dup == nil || r.dup.Instance != other.Instance
		r.dup, r.held = other, false
		r.mu.Unlock()
		if first {
			r.log.Error("registry_duplicate_worker", "worker", r.opts.Worker, "instance", r.opts.Instance,
				"other_instance", other.Instance, "other_url", other.URL, "card", r.CardPath())
		}
		return nil
	}
	r.mu.Unlock()
	if err := r.publish(StateRunning); err != nil {
		return err
	}
	r.mu.Lock()
	cleared := r.dup != nil
	r.dup, r.held = nil, true
	r.mu.Unlock()
	if cleared {
		r.log.Warn("registry_duplicate_worker_gone", "worker", r.opts.Worker, "instance", r.opts.Instance)
	}
	return nil
}

// liveForeignCard returns this worker name's card on disk when another
// instance wrote it, its state is running and it is fresh on the file
// server's clock; nil when there is no card, it is this process's, it does
// not decode, or it is stopped or stale.
func (r *Registry) liveForeignCard() (*Card, error) {
	b, err := os.ReadFile(r.CardPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the card of %s: %w", r.opts.Worker, err)
	}
	c, err := DecodeCard(b)
	if err != nil || c.Instance == r.opts.Instance || c.State != StateRunning {
		return nil, nil
	}
	fi, err := os.Stat(r.CardPath())
	if err != nil {
		return nil, nil
	}
	now, err := serverNow(r.opts.Dir, r.opts.Instance)
	if err != nil {
		return nil, err
	}
	if _, age := r.age(FileName(r.opts.Worker), fi.ModTime(), now); age > r.opts.OfflineAfter {
		return nil, nil
	}
	return &c, nil
}

// seenMark is a card file's modification time and when it was first read.
type seenMark struct{ mtime, at time.Time }

// age is the clamped last-seen time and age of the card file name whose
// modification time is mtime, at now (file server's clock): never after
// now, and from when this registry first read that mtime, so a card that
// is not rewritten ages even when its mtime lies in the future.
func (r *Registry) age(name string, mtime, now time.Time) (time.Time, time.Duration) {
	r.mu.Lock()
	m, ok := r.seen[name]
	if !ok || !m.mtime.Equal(mtime) {
		m = seenMark{mtime: mtime, at: now}
		r.seen[name] = m
	}
	r.mu.Unlock()
	last := mtime
	if m.at.Before(last) {
		last = m.at
	}
	age := now.Sub(last)
	if age < 0 {
		age = 0
	}
	return last, age
}

// ownCard reports whether the card on disk is this process's (or there
// is none and this process held it), that is whether a stop may write it.
func (r *Registry) ownCard() bool {
	b, err := os.ReadFile(r.CardPath())
	if errors.Is(err, os.ErrNotExist) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.held
	}
	if err != nil {
		return false
	}
	c, err := DecodeCard(b)
	return err == nil && c.Instance == r.opts.Instance
}

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

// Refresh reads the peers' cards now and replaces the snapshot. A card
// that carries this process's instance id under another worker's name is
// logged as registry_bad_card and left out. A card ages from when this
// registry first read its modification time when that is earlier (a card
// stamped in the future still goes offline once it is not rewritten).
func (r *Registry) Refresh(ctx context.Context) error {
	peers, now, err := readPeers(ctx, r.opts.Dir, r.opts.Instance, r.opts.OfflineAfter, r.log)
	if err != nil {
		return err
	}
	out := peers[:0]
	for _, p := range peers {
		if p.Worker == r.opts.Worker {
			continue
		}
		if p.Instance == r.opts.Instance {
			r.log.Warn("registry_bad_card", "card", FileName(p.Worker), "error", "it carries this worker's instance id")
			continue
		}
		p.LastSeen, p.Age = r.age(FileName(p.Worker), p.mtime, now)
		p.Online = p.Online && p.Age <= r.opts.OfflineAfter
		out = append(out, p)
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

// Close stops the loops, publishes a card whose state is stopped when the
// card is this process's (another instance's card, see Duplicate, is left
// as it is), and removes this process's clock marker. The card stays (a
// stopped worker is listed as offline).
func (r *Registry) Close(ctx context.Context) error {
	r.cancel()
	r.wg.Wait()
	var err error
	if r.ownCard() {
		err = r.publish(StateStopped)
	}
	if rmErr := os.Remove(ClockPath(r.opts.Dir, r.opts.Instance)); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	return err
}

// serverNow is ServerNow; the package's tests shift it.
var serverNow = ServerNow

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
// marker. A card's age is never below 0, and a card whose modification
// time lies more than offlineAfter ahead of that clock is not trusted: it
// is offline. Sorted by worker.
func ReadPeers(ctx context.Context, dir, instance string, offlineAfter time.Duration, log *slog.Logger) ([]Peer, error) {
	peers, _, err := readPeers(ctx, dir, instance, offlineAfter, log)
	return peers, err
}

// readPeers is ReadPeers that also returns the file server's now.
func readPeers(ctx context.Context, dir, instance string, offlineAfter time.Duration, log *slog.Logger) ([]Peer, time.Time, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list the registry folder %s: %w", dir, err)
	}
	now, err := serverNow(dir, instance)
	if err != nil {
		return nil, time.Time{}, err
	}
	var out []Peer
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, time.Time{}, err
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
	return out, now, nil
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
		return Peer{}, recordstore.Errorf(ErrBadCard, "the card names worker %q", c.Worker)
	}
	last := fi.ModTime()
	future := last.Sub(now) > offlineAfter
	if last.After(now) {
		last = now
	}
	age := now.Sub(last)
	return Peer{Worker: c.Worker, Instance: c.Instance, Cluster: c.Cluster, URL: c.URL, State: c.State,
		Online: c.State == StateRunning && age <= offlineAfter && !future, LastSeen: last, Age: age, Features: c.Features,
		mtime: fi.ModTime()}, nil
}

// RemoveClock removes the clock marker of instance in dir (a short-lived
// reader of the cards, such as a command, leaves none behind).
func RemoveClock(dir, instance string) error {
	if err := os.Remove(ClockPath(dir, instance)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
