// Replicator: owner.Replicator on Litestream. One replicator ships one
// store's live file while its process owns the store.

package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore/owner"
)

// DefaultInterval is how often a Replicator looks for new commits when
// Options.Interval is zero.
const DefaultInterval = 250 * time.Millisecond

// Options configure New.
type Options struct {
	// Logger receives the replicator's and Litestream's log lines;
	// default: discard.
	Logger *slog.Logger
	// Interval is how often new commits are looked for and shipped;
	// default DefaultInterval. A Wait ships at once.
	Interval time.Duration
}

// Replicator ships a store's live file to a replica with Litestream. It
// implements owner.Replicator: give it to owner.Options.Replica (one per
// store). While it runs it is the only one to checkpoint the live file's
// WAL — the store's writer must run with sqlite.Options.NoCheckpoint —
// so that every WAL frame is read before it is checkpointed away;
// Litestream keeps a read transaction open so that no other connection
// can restart the WAL under it either. Its working files (LTX files of
// the commits it shipped) live in the folder ".<live file name>-litestream"
// beside the live file.
type Replicator struct {
	target string
	client litestream.ReplicaClient
	log    *slog.Logger
	every  time.Duration

	// ship serializes shipping cycles (the loop's, Wait's and Stop's):
	// a one-slot semaphore, so that a Wait gives up when its ctx ends
	// while another cycle retries an unreachable replica.
	ship chan struct{}

	mu struct {
		sync.Mutex
		db      *litestream.DB
		store   *litestream.Store // compaction and retention of db's files
		opened  bool              // store opened (its client initialized)
		live    string
		cancel  context.CancelFunc
		done    chan struct{}
		status  owner.ReplicaStatus
		pending time.Time // when a commit not shipped yet was first seen
		walSeen walStamp  // the WAL as it was when it was last shipped
	}
}

var _ owner.Replicator = (*Replicator)(nil)

// New returns a replicator to the replica address url (see NewClient). It
// touches no network and no file: Start does. A bad address is refused
// with an error wrapping ErrBadURL.
func New(url string, opts Options) (*Replicator, error) {
	c, err := NewClient(url)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	r := &Replicator{target: Redact(url), client: c, log: opts.Logger.With("component", "recordstore_replica"), every: opts.Interval,
		ship: make(chan struct{}, 1)}
	r.mu.status.Target = r.target
	return r, nil
}

// Factory returns a function giving each store of a fleet its own
// replicator under the sub-prefix it names ("tenant/<id>", "slot/<nnnnn>")
// of url, as fleet.Options.Replica takes it. A bad url is refused at once.
func Factory(url string, opts Options) (func(sub string) (owner.Replicator, error), error) {
	if _, err := Parse(url); err != nil {
		return nil, err
	}
	return func(sub string) (owner.Replicator, error) {
		u, err := Join(url, sub)
		if err != nil {
			return nil, err
		}
		return New(u, opts)
	}, nil
}

// Start begins shipping the live file at live, in the background: it
// sets Litestream up on the file (its replica client, its compaction of
// shipped files into larger ones, its retention of local ones) and ships
// every Interval. A replica that cannot be reached, even at first, is
// reported by Status and tried again every Interval. A replicator already
// running is closed first, without waiting for a ship (the lock was held
// throughout: this run ships what that one left).
func (r *Replicator) Start(_ context.Context, live string) error {
	r.mu.Lock()
	old, opened := r.mu.store, r.mu.opened
	r.mu.Unlock()
	if db := r.halt(); db != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = r.closeDB(ctx, db, old, opened)
	}
	db := litestream.NewDB(live)
	db.MonitorInterval = 0 // this replicator's loop syncs
	db.Replica = litestream.NewReplicaWithClient(db, r.client)
	db.Replica.MonitorEnabled = false
	store := litestream.NewStore([]*litestream.DB{db}, litestream.DefaultCompactionLevels)
	store.Logger = r.log
	db.SetLogger(r.log.With("live", live))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.mu.Lock()
	r.mu.db, r.mu.store, r.mu.opened = db, store, false
	r.mu.live, r.mu.cancel, r.mu.done = live, cancel, done
	r.mu.status.Running = true
	r.mu.walSeen = walStamp{size: -1}
	r.mu.Unlock()
	go r.loop(ctx, done)
	return nil
}

// loop opens the Litestream store (until it can), then ships every
// Interval while the WAL changed since the last ship or the last ship
// failed, until its ctx ends.
func (r *Replicator) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		if r.due() {
			_ = r.shipNow(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// open opens the Litestream store once (it clears Litestream's staging
// files, so it runs in the ship slot, never beside a ship); a failure is
// recorded for Status.
func (r *Replicator) open(ctx context.Context) bool {
	r.mu.Lock()
	store, opened := r.mu.store, r.mu.opened
	r.mu.Unlock()
	if opened || store == nil {
		return opened
	}
	err := store.Open(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failed(err)
		return false
	}
	r.mu.opened = true
	return true
}

// due reports whether the loop has anything to do: the store is not
// open yet, the WAL changed since the last ship, or that ship failed.
func (r *Replicator) due() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.mu.opened || r.mu.status.LastError != "" || statWAL(r.mu.live) != r.mu.walSeen
}

// shipNow runs one cycle: new WAL frames into an LTX file (checkpointing
// when Litestream decides to), then every LTX file the replica lacks to
// the replica. It records the outcome for Status.
func (r *Replicator) shipNow(ctx context.Context) error {
	select {
	case r.ship <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.ship }()
	r.mu.Lock()
	db, live := r.mu.db, r.mu.live
	r.mu.Unlock()
	if db == nil {
		return fmt.Errorf("%w", owner.ErrNotReplicating)
	}
	if !r.open(ctx) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return errors.New(r.mu.status.LastError)
	}
	started := time.Now()
	wal := statWAL(live)
	r.notePending(wal, started)
	err := db.Sync(ctx)
	if err == nil {
		err = db.Replica.Sync(ctx)
	}
	if err != nil && ctx.Err() != nil {
		return err // the caller stopped waiting: not a failure of shipping
	}
	r.record(db, wal, started, err)
	return err
}

// notePending marks the time a change of the WAL since the last ship was
// first seen: the oldest commit the replica may lack is no younger.
func (r *Replicator) notePending(wal walStamp, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if wal != r.mu.walSeen && r.mu.pending.IsZero() {
		r.mu.pending = now
	}
}

// record keeps a cycle's outcome: the positions, and either the catch-up
// (the WAL as it was when the cycle began is shipped) or the error.
func (r *Replicator) record(db *litestream.DB, wal walStamp, started time.Time, err error) {
	local, _ := db.Pos()
	remote := db.Replica.Pos()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &r.mu.status
	st.LocalTXID, st.ReplicaTXID = uint64(local.TXID), uint64(remote.TXID)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.mu.db != db {
			return // stopped meanwhile
		}
		r.failed(err)
		return
	}
	st.LastError, st.FailingSince = "", time.Time{}
	st.ShippedAt = time.Now().UTC()
	r.mu.walSeen = wal
	if !r.mu.pending.IsZero() && !r.mu.pending.After(started) {
		r.mu.pending = time.Time{}
	}
}

// failed records a failure for Status; r.mu is held.
func (r *Replicator) failed(err error) {
	st := &r.mu.status
	st.LastError = err.Error()
	if st.FailingSince.IsZero() {
		st.FailingSince = time.Now().UTC()
	}
}

// Wait returns once the replica holds every transaction committed to the
// live file before the call: it ships at once (Litestream reads the WAL
// to its end), and again while the replica lags the local position.
func (r *Replicator) Wait(ctx context.Context) error {
	for {
		if err := r.shipNow(ctx); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("wait for the replica: %w", ctx.Err())
			}
			return fmt.Errorf("wait for the replica: %w", err)
		}
		st := r.Status()
		if st.ReplicaTXID >= st.LocalTXID {
			return nil
		}
	}
}

// Stop ships what is left, giving up when ctx ends, and stops: Litestream
// syncs the WAL a last time, uploads, and releases its read transaction.
// The working files stay for the next owner.
func (r *Replicator) Stop(ctx context.Context) error {
	r.mu.Lock()
	store, opened := r.mu.store, r.mu.opened
	r.mu.Unlock()
	db := r.halt()
	if db == nil {
		return nil
	}
	select {
	case r.ship <- struct{}{}: // the loop is halted; a Wait may be shipping
		defer func() { <-r.ship }()
	case <-ctx.Done():
		// Closed all the same (Litestream serializes it with that ship):
		// its read transaction must not outlive this owner.
	}
	var err error
	if !opened && store != nil {
		// Started a moment ago (a drain on close ships through Start and
		// Stop at once): the loop may not have opened Litestream's store
		// yet, and a DB never opened closes without shipping anything.
		if err = store.Open(ctx); err == nil {
			opened = true
		} else {
			err = fmt.Errorf("open the replica: %w", err)
		}
	}
	wal := statWAL(db.Path())
	if opened {
		// Litestream's Close syncs a DB only once a sync initialized it
		// (its read transaction, its position): when the loop's first
		// ship was still under way, halt cut it short and Close would
		// ship nothing, and say nothing of it. Ship here first.
		if err = db.Sync(ctx); err == nil {
			err = db.Replica.Sync(ctx)
		}
	}
	if cerr := r.closeDB(ctx, db, store, opened); err == nil {
		err = cerr
	}
	r.record(db, wal, time.Now(), err)
	r.mu.Lock()
	r.mu.status.Running = false
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("replicate %s: last ship: %w", db.Path(), err)
	}
	return nil
}

// closeDB closes db with one last ship bounded by ctx: through its
// Litestream store when it was opened (which stops compaction and
// retention first), else alone.
func (r *Replicator) closeDB(ctx context.Context, db *litestream.DB, store *litestream.Store, opened bool) error {
	timeout := time.Duration(0) // one attempt; the bound is ctx's
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	db.ShutdownSyncTimeout, db.ShutdownSyncInterval = timeout, 100*time.Millisecond
	if opened {
		store.ShutdownSyncTimeout, store.ShutdownSyncInterval = timeout, 100*time.Millisecond
		return store.Close(ctx)
	}
	return db.Close(ctx)
}

// halt stops the loop and takes the running DB out (nil when none).
func (r *Replicator) halt() *litestream.DB {
	r.mu.Lock()
	db, cancel, done := r.mu.db, r.mu.cancel, r.mu.done
	r.mu.db, r.mu.store, r.mu.opened, r.mu.cancel, r.mu.done = nil, nil, false, nil, nil
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return db
}

// Status reports where shipping stands; LagBytes and LagSeconds are
// measured now, against the WAL's size and the oldest unshipped change.
func (r *Replicator) Status() owner.ReplicaStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.mu.status
	if r.mu.db == nil {
		return st
	}
	wal, seen := statWAL(r.mu.live), r.mu.walSeen
	changed := wal != seen
	switch {
	case !changed:
	case seen.size < 0 || wal.size <= seen.size:
		// The WAL restarted (or was first seen): all of it may be new.
		st.LagBytes = max(wal.size, 0)
	default:
		st.LagBytes = wal.size - seen.size
	}
	if changed && r.mu.pending.IsZero() {
		r.mu.pending = time.Now()
	}
	if !r.mu.pending.IsZero() {
		st.LagSeconds = time.Since(r.mu.pending).Seconds()
	}
	return st
}

// walStamp is what a stat tells of a WAL: its size (-1 when there is
// none) and modification time. Commits change it.
type walStamp struct {
	size int64
	mod  time.Time
}

// statWAL stamps live's WAL.
func statWAL(live string) walStamp {
	fi, err := os.Stat(live + "-wal")
	if err != nil {
		return walStamp{size: -1}
	}
	return walStamp{size: fi.Size(), mod: fi.ModTime()}
}
