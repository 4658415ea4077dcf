// The change feed: PRAGMA data_version, polled on the reader pool's
// connections (see watcher), tells when any other connection — in this
// process or another — committed to the live file. A read-only backend
// follows it to refresh its catalog and wake the Notifier.

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// WatchChanges calls changed after each commit to the live file by another
// connection (another process's, or this backend's writer), until ctx ends;
// it returns ctx.Err() then, an error wrapping ErrClosed once the backend is
// closed, or the error that broke its polling. It reads PRAGMA
// data_version every Options.ChangeInterval on a free connection of the
// reader pool (no connection of its own), so several commits between two
// polls are reported once; a poll that finds every reader busy for a whole
// interval reports nothing and the next one catches up. A reader
// connection it reads for the first time counts as a change. After a
// Rotate it watches the new live file (and calls changed once for the
// switch).
func (b *Backend) WatchChanges(ctx context.Context, changed func()) error {
	if err := b.enter(); err != nil {
		return err
	}
	w, err := b.openWatcher(ctx)
	b.leave()
	if err != nil {
		return err
	}
	return b.watch(ctx, w, changed)
}

// watch polls w until ctx ends, the backend closes or polling fails,
// calling changed after each change.
func (b *Backend) watch(ctx context.Context, w *watcher, changed func()) error {
	tick := time.NewTicker(b.opts.ChangeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		var moved bool
		var err error
		if w, moved, err = b.step(ctx, w); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("watch changes of %s: %w", b.path, err)
		}
		if moved {
			changed()
		}
	}
}

// step is one look at the file through w: after a Rotate, a watcher of
// the new live file (the switch is a change); else a poll of w. It
// returns the watcher to use next; an error wraps ErrClosed once the
// backend is closed.
func (b *Backend) step(ctx context.Context, w *watcher) (*watcher, bool, error) {
	if b.LivePath() != w.live {
		next, err := b.reopenWatcher(ctx)
		if err != nil {
			return w, false, err
		}
		return next, true, nil
	}
	moved, err := b.poll(ctx, w)
	return w, moved, err
}

// feedHandle is a running change feed subscription: a timer that runs one
// poll at a time (on the goroutine time.AfterFunc gives it) and is set
// again when the poll ends. Between polls no goroutine waits for it: a
// process with many stores open to read keeps no goroutine per store.
type feedHandle struct {
	b      *Backend
	ctx    context.Context
	cancel context.CancelFunc
	w      *watcher // nil: the next poll opens one and catches up first
	done   chan struct{}

	mu       sync.Mutex
	timer    *time.Timer
	running  bool // a poll is running
	again    bool // poll again at once when the running one ends (see kick)
	ended    bool // no poll is to start any more
	finished bool // done is closed
}

// startFeed starts the read-only backend's change feed subscription: on
// every change it refreshes the catalog and wakes every follower. w is the
// watcher Open made before it loaded the catalog, or nil: the feed then
// opens one at once and catches up (refresh and wake) with whatever it
// may have missed. Nothing starts once Close has begun.
func (b *Backend) startFeed(w *watcher) {
	b.bg.Lock()
	defer b.bg.Unlock()
	if b.bg.stopping || b.bg.feed != nil {
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	f := &feedHandle{b: b, ctx: ctx, cancel: cancel, w: w, done: make(chan struct{})}
	b.bg.feed = f
	b.wg.Add(1)
	first := b.opts.ChangeInterval
	if w == nil {
		first = 0
	}
	f.mu.Lock()
	f.timer = time.AfterFunc(first, f.tick)
	f.mu.Unlock()
	context.AfterFunc(ctx, f.end) // Close and stopFeed end it at once
}

// stopFeed stops the change feed subscription, if one runs, and waits for
// its running poll, if any, to finish.
func (b *Backend) stopFeed() {
	b.bg.Lock()
	f := b.bg.feed
	b.bg.feed = nil
	b.bg.Unlock()
	if f != nil {
		f.cancel()
		<-f.done
	}
}

// tick runs one poll and sets the timer again, unless the feed ended.
func (f *feedHandle) tick() {
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return
	}
	f.running = true
	f.mu.Unlock()
	more := f.poll()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = false
	if !more {
		f.ended = true
	}
	if f.ended {
		f.finishLocked()
		return
	}
	next := f.b.feedInterval()
	if f.again {
		f.again, next = false, 0
	}
	f.timer.Reset(next)
}

// end stops the feed when its context ends: at once when no poll runs,
// else when the running one returns.
func (f *feedHandle) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
	f.timer.Stop()
	if !f.running {
		f.finishLocked()
	}
}

// finishLocked releases the feed, once: its context, the backend's count
// of background work, and done.
func (f *feedHandle) finishLocked() {
	if f.finished {
		return
	}
	f.finished = true
	f.cancel()
	close(f.done)
	f.b.wg.Done()
}

// poll is one step of the feed: open a watcher (after a start without one
// or an error) and catch up, follow a Rotate to the new live file, or poll
// for a change; each change refreshes the catalog and wakes every
// follower. It reports false when the feed is over (its context ended or
// the backend closed); an error of another kind is logged and the next
// step starts again from a new watcher, catching up.
func (f *feedHandle) poll() bool {
	b, ctx := f.b, f.ctx
	var moved bool
	var err error
	if f.w == nil {
		f.w, err = b.reopenWatcher(ctx)
		moved = err == nil
	} else {
		f.w, moved, err = b.step(ctx, f.w)
	}
	if ctx.Err() != nil || errors.Is(err, recordstore.ErrClosed) {
		return false
	}
	if err != nil {
		b.log.Warn("change feed: poll failed; starting again from a new watcher", "err", err)
		f.w = nil
		return true
	}
	if moved {
		b.refreshCatalog(ctx)
		b.notifier.NotifyAll()
	}
	return true
}

// refreshCatalog brings a read-only backend's view of the file up to date
// after another process changed it: the epoch, and, when the file's schema
// changed (a kind or a column was added), the cached kinds.
func (b *Backend) refreshCatalog(ctx context.Context) {
	if err := b.enter(); err != nil {
		return
	}
	defer b.leave()
	if !b.readOnly {
		return
	}
	if epoch, err := readEpoch(ctx, b.r); err == nil {
		b.epoch.Store(epoch)
	}
	var sv int64
	if err := b.r.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&sv); err != nil || sv == b.schemaVersion {
		return
	}
	if err := b.refreshKinds(ctx); err != nil {
		if ctx.Err() == nil { // not the backend closing under a poll
			b.log.Warn("refresh kinds", "err", err)
		}
		return
	}
	b.schemaVersion = sv
}

// refreshKinds caches the kinds of the catalog that are new to this process
// or have gained columns (the only changes a kind ever sees).
func (b *Backend) refreshKinds(ctx context.Context) error {
	rows, err := b.r.QueryContext(ctx, `SELECT name, table_name, schema FROM record_kinds`)
	if err != nil {
		return fmt.Errorf("read kinds: %w", err)
	}
	type stale struct {
		kind  recordstore.Kind
		table string
	}
	var todo []stale
	for rows.Next() {
		var name, table, schema string
		if err := rows.Scan(&name, &table, &schema); err != nil {
			_ = rows.Close()
			return fmt.Errorf("read kinds: %w", err)
		}
		k, err := parseSchema(name, schema)
		if err != nil {
			_ = rows.Close()
			return err
		}
		if t := b.tables.get(name); t == nil || len(t.kind.Columns) != len(k.Columns) {
			todo = append(todo, stale{k, table})
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("read kinds: %w", err)
	}
	for _, s := range todo {
		t, err := newTable(ctx, b.w, b.r, s.kind, s.table)
		if err != nil {
			return err
		}
		b.tables.put(t, false)
		b.log.Debug("kind changed by another process", "kind", s.kind.Name, "columns", len(s.kind.Columns))
	}
	return nil
}
