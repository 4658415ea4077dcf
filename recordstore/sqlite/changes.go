// The change feed: PRAGMA data_version, polled on the reader pool's
// connections (see watcher), tells when any other connection — in this
// process or another — committed to the live file. A read-only backend
// follows it to refresh its catalog and wake the Notifier.

package sqlite

import (
	"context"
	"errors"
	"fmt"
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

// watch polls w until ctx ends, the backend closes or w fails, calling
// changed after each change; it closes w (and the watcher of the new live
// file it replaces w with after a Rotate).
func (b *Backend) watch(ctx context.Context, w *watcher, changed func()) error {
	defer func() { w.close() }()
	tick := time.NewTicker(b.opts.ChangeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if b.isClosed() {
			return closedErr(b.path)
		}
		if live := b.LivePath(); live != w.live {
			next, err := b.reopenWatcher(ctx)
			if err != nil {
				return err
			}
			w.close()
			w = next
			changed()
			continue
		}
		moved, err := b.poll(ctx, w)
		if err != nil {
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

// isClosed reports whether Close has run (or is running).
func (b *Backend) isClosed() bool {
	if !b.life.TryRLock() {
		return false // Close or Promote is running; look again next time
	}
	defer b.life.RUnlock()
	return b.closed
}

// feedHandle is a running change feed subscription.
type feedHandle struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startFeed starts the read-only backend's change feed subscription: on
// every change it refreshes the catalog and wakes every follower. w is the
// watcher Open made before it loaded the catalog, or nil: the feed then
// opens one and catches up once (refresh and wake) with whatever it may
// have missed. Nothing starts once Close has begun.
func (b *Backend) startFeed(w *watcher) {
	b.bg.Lock()
	defer b.bg.Unlock()
	if b.bg.stopping || b.bg.feed != nil {
		if w != nil {
			w.close()
		}
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	f := &feedHandle{cancel: cancel, done: make(chan struct{})}
	b.bg.feed = f
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(f.done)
		b.followChanges(ctx, w)
	}()
}

// stopFeed stops the change feed subscription, if one runs, and waits for
// it to finish.
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

// followChanges follows the file's changes with w until ctx ends, opening
// a new watcher after an error (a connection the file's owner broke, say)
// and catching up with what it may have missed in between.
func (b *Backend) followChanges(ctx context.Context, w *watcher) {
	refresh := func() {
		b.refreshCatalog(ctx)
		b.notifier.NotifyAll()
	}
	for {
		var err error
		if w == nil {
			if w, err = b.reopenWatcher(ctx); err == nil {
				refresh()
			}
		}
		if err == nil {
			err = b.watch(ctx, w, refresh)
			w = nil
		}
		if ctx.Err() != nil || errors.Is(err, recordstore.ErrClosed) {
			return
		}
		b.log.Warn("change feed stopped; starting it again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.opts.ChangeInterval):
		}
	}
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
		b.log.Warn("refresh kinds", "err", err)
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
