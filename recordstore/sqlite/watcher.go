// The change probe behind WatchChanges: PRAGMA data_version read on the
// reader pool's own connections instead of a connection of its own.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// watcher tells whether the live file changed since its last poll. It
// reads PRAGMA data_version on whichever connection of the reader pool is
// free, and keeps the value last read on each: a connection's
// data_version moves when another connection committed since that
// connection last read it, so a change after the last poll shows on every
// connection the next poll may get. A connection it has not seen before
// counts as a change (its past is unknown): one spurious wake per new
// connection, never a missed commit. It holds no connection between polls
// (a file that must not stay open, such as the one Rotate left, is not kept
// open by it), and it never opens a file itself: closing a descriptor of a
// file SQLite has open would drop SQLite's POSIX locks on it.
type watcher struct {
	live string        // the live file it watches
	seen map[any]int64 // the data_version last read on each pool connection
}

// openWatcher reads the first data_version of a pool connection: every
// commit after that is a change. The caller holds life (or is Open).
func (b *Backend) openWatcher(ctx context.Context) (*watcher, error) {
	w := &watcher{live: b.live, seen: make(map[any]int64, b.opts.ReadConns)}
	if _, err := w.read(ctx, b.r, b.opts.ReadConns); err != nil {
		return nil, fmt.Errorf("watch changes of %s: %w", b.path, err)
	}
	return w, nil
}

// reopenWatcher opens a watcher of the live file Rotate switched to.
func (b *Backend) reopenWatcher(ctx context.Context) (*watcher, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	return b.openWatcher(ctx)
}

// poll reports whether the file changed since the last poll. It waits at
// most Options.ChangeInterval for a free pool connection; when all stay
// busy it reports no change this time (the next poll still sees it).
func (b *Backend) poll(ctx context.Context, w *watcher) (bool, error) {
	if err := b.enter(); err != nil {
		return false, err
	}
	defer b.leave()
	if b.opts.BeforeChangeProbe != nil {
		b.opts.BeforeChangeProbe()
	}
	tctx, cancel := context.WithTimeout(ctx, b.opts.ChangeInterval)
	defer cancel()
	moved, err := w.read(tctx, b.r, b.opts.ReadConns)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return false, nil // every reader busy: look again next time
	}
	return moved, err
}

// read takes a free connection of pool and reads its data_version,
// reporting whether it differs from the last one read there (or the
// connection is new to w). The map is emptied when it outgrows twice the
// pool's size (connections the pool closed and replaced): each connection
// then counts once more as new.
func (w *watcher) read(ctx context.Context, pool *sql.DB, size int) (bool, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	defer conn.Close()
	var key any
	if err := conn.Raw(func(dc any) error { key = dc; return nil }); err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	var v int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	last, known := w.seen[key]
	if !known && len(w.seen) >= 2*size {
		clear(w.seen)
	}
	w.seen[key] = v
	return !known || last != v, nil
}
