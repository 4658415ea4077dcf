// The Fleet: a root folder of stores placed by a path template, its
// options, and how a key becomes a store path.

package fleet

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/replica"
)

// Store is a fleet store, opened through the owner election over the SQLite
// backend (records.Open): the owner writes it, other processes write
// through its spool. Its Backend is a *sqlite.Backend, or a
// *submitonly.Backend in a process detached from the store's catalog
// (owner.RoleDetached: its owner runs another catalog version).
type Store = records.Store

// Opener opens the store whose file (the live SQLite file, also the
// store's configured path: its lock, state file and spool lie beside it)
// is path. It must take part in the owner election, as DefaultOpener does
// (at open, or deferred to the store's first write with
// owner.Options.DeferElection).
type Opener func(ctx context.Context, path string) (*Store, error)

// OnDemand says whether opening a key with no store creates it.
type OnDemand int

// The create-on-demand policies.
const (
	// OnDemandDefault creates on demand in a slot fleet, never in a
	// tenant fleet (any client could otherwise fill the disk with ids).
	OnDemandDefault OnDemand = iota
	// OnDemandCreate creates a missing store on its first open.
	OnDemandCreate
	// OnDemandRefuse answers a missing store with recordstore.ErrNotFound.
	OnDemandRefuse
)

// Options configure Open. Mode is required; the rest has defaults.
type Options struct {
	// Mode is ModeTenant or ModeSlot.
	Mode Mode
	// Path is the path template (default DefaultTemplate(Mode)).
	Path string
	// Kinds are declared in every store: on creation, and on open when a
	// store lacks one or a column (additive only; an incompatible change
	// is refused with recordstore.ErrSchemaConflict naming the store).
	Kinds []recordstore.Kind
	// CreateOnDemand: see OnDemand.
	CreateOnDemand OnDemand
	// MaxOpen is the soft limit of open stores (default 256): past it the
	// least recently used idle store is closed, never one in use or used
	// within MinResidency. An open never waits for room.
	MaxOpen int
	// MinResidency is how long after its last use a store is kept open
	// whatever MaxOpen says (default 2s; negative: 0).
	MinResidency time.Duration
	// IdleClose closes a store unused this long (default 5m; negative:
	// never).
	IdleClose time.Duration
	// SweepInterval is the sweeper's period (default 1s; negative: no
	// sweeper goroutine, call Sweep).
	SweepInterval time.Duration
	// Outside lists store paths (a control store, the CLI's default store)
	// that must not lie inside the root; Open refuses with
	// recordstore.ErrInvalid when one does.
	Outside []string
	// Open opens one store (default DefaultOpener(StoreOptions{Logger})).
	Open Opener
	// RestoreMissing restores a key whose store file is missing from the
	// key's replica (Replica joined with Key.ReplicaPrefix) before its
	// first open, under the store's lease, so that two hosts sharing the
	// replica never restore and write one store at once (see
	// restoremissing.go). An empty or absent replica leaves the key as
	// without the option: created on demand, or recordstore.ErrNotFound.
	// Open must fence each store by its lease and catch it up from its
	// replica (DefaultOpener with StoreOptions.Fence and CatchUpFrom);
	// another Opener fails such an open with recordstore.ErrInvalid.
	// Needs Replica.
	RestoreMissing bool
	// Replica is the fleet's replica address (see replica.NewClient), the
	// one StoreOptions.Replica and Fence were made from. Only
	// RestoreMissing reads it.
	Replica string
	// Now is the clock of the LRU (default time.Now).
	Now func() time.Time
	// Logger receives the fleet's log lines (default: discard).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Path == "" {
		o.Path = DefaultTemplate(o.Mode)
	}
	if o.MaxOpen <= 0 {
		o.MaxOpen = 256
	}
	if o.MinResidency == 0 {
		o.MinResidency = 2 * time.Second
	} else if o.MinResidency < 0 {
		o.MinResidency = 0
	}
	if o.IdleClose == 0 {
		o.IdleClose = 5 * time.Minute
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Open == nil {
		o.Open = DefaultOpener(StoreOptions{Logger: o.Logger})
	}
	return o
}

// Fleet is a set of stores under one root. It is safe for concurrent use,
// and several processes may open one root at once: each store has its own
// owner election.
type Fleet struct {
	root     string // resolved once
	tpl      Template
	opts     Options
	log      *slog.Logger
	onDemand bool // create a missing store on its first open

	// mu guards the open stores: entries by key, lru with the most
	// recently used at the front, and the keys being deleted.
	mu       sync.Mutex
	entries  map[Key]*entry
	lru      *list.List
	deleting map[Key]bool
	// goneOpen are the stores forgotten as gone (see forgetGone) and not
	// closed yet, by key: a new open of the key waits for their close.
	goneOpen map[Key]*entry
	closed   bool
	// stamps are the files of the stores this process checked and closed
	// since (see stamp.go).
	stamps map[Key]stamp

	stats struct{ opens, closes, evictions, idleCloses, creates atomic.Int64 }

	// hooks are test seams (export_test.go).
	hooks struct {
		beforePublish func(path string) error
		inspected     func(rel string) // each store file whose identity List or ListPage reads
		sqliteRead    func(rel string) // each of those read through SQLite, not from its pages
		identityRead  func(abs string) // each identity read before an open
	}

	cancel context.CancelFunc
	wg     sync.WaitGroup // the sweeper and background closes
}

// Open opens the fleet at root, which must exist (no operation creates the
// root). It resolves the root once, checks the template and that no path
// of Options.Outside lies inside the root, and starts the sweeper. Nothing
// is created.
func Open(root string, opts Options) (*Fleet, error) {
	if _, err := ParseMode(string(opts.Mode)); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	tpl, err := ParseTemplate(opts.Path, opts.Mode)
	if err != nil {
		return nil, err
	}
	if opts.RestoreMissing {
		if opts.Replica == "" {
			return nil, recordstore.Invalidf("fleet: RestoreMissing needs Replica, the fleet's replica address")
		}
		if _, err := replica.Parse(opts.Replica); err != nil {
			return nil, err
		}
	}
	real, err := resolveRoot(root)
	if err != nil {
		return nil, err
	}
	for _, p := range opts.Outside {
		if err := checkOutside(real, p); err != nil {
			return nil, err
		}
	}
	opts.Kinds = append([]recordstore.Kind(nil), opts.Kinds...)
	for i := range opts.Kinds {
		if err := opts.Kinds[i].Validate(); err != nil {
			return nil, fmt.Errorf("fleet kind %s: %w", opts.Kinds[i].Name, err)
		}
	}
	f := &Fleet{
		root: real, tpl: tpl, opts: opts,
		log:      opts.Logger.With("component", "recordstore_fleet", "root", real),
		onDemand: opts.CreateOnDemand == OnDemandCreate || opts.CreateOnDemand == OnDemandDefault && opts.Mode == ModeSlot,
		entries:  map[Key]*entry{},
		lru:      list.New(),
		deleting: map[Key]bool{},
		goneOpen: map[Key]*entry{},
		stamps:   map[Key]stamp{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	if opts.SweepInterval > 0 {
		f.wg.Add(1)
		go f.sweeper(ctx)
	}
	return f, nil
}

// Root is the fleet's root, resolved (absolute, symlinks followed).
func (f *Fleet) Root() string { return f.root }

// Template is the fleet's path template.
func (f *Fleet) Template() Template { return f.tpl }

// Mode is the fleet's mode.
func (f *Fleet) Mode() Mode { return f.tpl.mode }

// KeyFor returns the key of a tenant id (tenant fleet) or routing key
// (slot fleet).
func (f *Fleet) KeyFor(id string) (Key, error) {
	if f.tpl.mode == ModeSlot {
		return RoutingKey(id), nil
	}
	return TenantKey(id)
}

// ParseKey parses a key as list prints it and checks it belongs to this
// fleet (its mode).
func (f *Fleet) ParseKey(s string) (Key, error) {
	k, err := ParseKey(s)
	if err != nil {
		return Key{}, err
	}
	return k, f.tpl.check(k)
}

// Path returns the store path of k (absolute), after checking the key and
// the root containment (see ErrOutsideRoot). It only stats.
func (f *Fleet) Path(k Key) (string, error) {
	rel, err := f.tpl.Path(k)
	if err != nil {
		return "", err
	}
	abs := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := contain(f.root, abs); err != nil {
		return "", err
	}
	return abs, nil
}

// Stats are the fleet's counters in this process.
type Stats struct {
	Open       int   `json:"open"`       // stores open now
	Leased     int   `json:"leased"`     // of them, held by a lease
	Draining   int   `json:"draining"`   // of them, being closed
	Opens      int64 `json:"opens"`      // opens done (a shared first open counts once)
	Closes     int64 `json:"closes"`     // closes done
	Evictions  int64 `json:"evictions"`  // closes for MaxOpen
	IdleCloses int64 `json:"idleCloses"` // closes for IdleClose
	Creates    int64 `json:"creates"`    // stores created by this process
}

// Stats returns the fleet's counters.
func (f *Fleet) Stats() Stats {
	f.mu.Lock()
	s := Stats{Open: len(f.entries)}
	for _, e := range f.entries {
		if e.leases > 0 {
			s.Leased++
		}
		if e.draining {
			s.Draining++
		}
	}
	f.mu.Unlock()
	s.Opens = f.stats.opens.Load()
	s.Closes = f.stats.closes.Load()
	s.Evictions = f.stats.evictions.Load()
	s.IdleCloses = f.stats.idleCloses.Load()
	s.Creates = f.stats.creates.Load()
	return s
}
