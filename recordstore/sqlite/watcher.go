// The change probe behind WatchChanges: PRAGMA data_version read on the
// reader pool's own connections instead of a connection of its own, with
// the statement prepared once per connection (probeCache).

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
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

// probeSQL is the change probe's statement.
const probeSQL = "PRAGMA data_version"

// probeCache keeps the change probe's statement prepared on each reader
// connection it ran on, so that a poll runs it without parsing it again
// (a follower woken by every commit of a busy owner polls as often). Each
// statement is used only inside database/sql's Conn.Raw on its own
// connection, and finalized by close, which the backend calls before it
// closes the reader pool (Close, Rotate's switch), with life held
// exclusively. A statement whose query fails is finalized at once and
// prepared again by the next poll. A connection the pool discards
// (database/sql drops one its driver reports broken) closes with its
// statement unfinalized: SQLite then keeps that handle, and its file
// descriptor, until the process ends — no wrong read, one descriptor;
// the pool of this package discards none in normal use (no lifetime, no
// idle limit below its size).
type probeCache struct {
	mu sync.Mutex
	m  map[driver.Conn]*probe
}

// probe is the prepared statement of one connection and its row buffer.
type probe struct {
	stmt driver.Stmt
	row  []driver.Value
}

// read runs the probe on dc, a connection the caller has to itself.
func (c *probeCache) read(ctx context.Context, dc driver.Conn) (int64, error) {
	c.mu.Lock()
	p := c.m[dc]
	c.mu.Unlock()
	if p == nil {
		prep, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return 0, fmt.Errorf("driver connection %T cannot prepare with a context", dc)
		}
		st, err := prep.PrepareContext(ctx, probeSQL)
		if err != nil {
			return 0, err
		}
		if _, ok := st.(driver.StmtQueryContext); !ok {
			_ = st.Close()
			return 0, fmt.Errorf("driver statement %T cannot query with a context", st)
		}
		p = &probe{stmt: st, row: make([]driver.Value, 1)}
		c.mu.Lock()
		if c.m == nil {
			c.m = make(map[driver.Conn]*probe)
		}
		c.m[dc] = p
		c.mu.Unlock()
	}
	v, err := p.run(ctx)
	if err != nil {
		c.mu.Lock()
		delete(c.m, dc)
		c.mu.Unlock()
		_ = p.stmt.Close()
	}
	return v, err
}

// run steps the statement once and resets it.
func (p *probe) run(ctx context.Context) (int64, error) {
	rows, err := p.stmt.(driver.StmtQueryContext).QueryContext(ctx, nil)
	if err != nil {
		return 0, err
	}
	err = rows.Next(p.row)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, io.EOF) {
		return 0, errors.New("no data_version row")
	}
	if err != nil {
		return 0, err
	}
	v, ok := p.row[0].(int64)
	if !ok {
		return 0, fmt.Errorf("data_version is %T, not an integer", p.row[0])
	}
	return v, nil
}

// close finalizes every statement whose connection is still open. The
// caller holds life exclusively (no connection of the pool is in use) and
// closes the pool next.
func (c *probeCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for dc, p := range c.m {
		if v, ok := dc.(driver.Validator); ok && !v.IsValid() {
			continue // closed by the pool already: see probeCache
		}
		errs = append(errs, p.stmt.Close())
	}
	c.m = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close change probes: %w", err)
	}
	return nil
}

// openWatcher reads the first data_version of a pool connection: every
// commit after that is a change. The caller holds life (or is Open).
func (b *Backend) openWatcher(ctx context.Context) (*watcher, error) {
	w := &watcher{live: b.live, seen: make(map[any]int64, b.opts.ReadConns)}
	if _, err := w.read(ctx, b.r, &b.probes, b.opts.ReadConns); err != nil {
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
	moved, err := w.read(tctx, b.r, &b.probes, b.opts.ReadConns)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return false, nil // every reader busy: look again next time
	}
	return moved, err
}

// read takes a free connection of pool and reads its data_version through
// probes, reporting whether it differs from the last one read there (or
// the connection is new to w). The map is emptied when it outgrows twice
// the pool's size (connections the pool closed and replaced): each
// connection then counts once more as new.
func (w *watcher) read(ctx context.Context, pool *sql.DB, probes *probeCache, size int) (bool, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	defer conn.Close()
	var key any
	var v int64
	if err := conn.Raw(func(dc any) error {
		key = dc
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("connection %T is not a driver connection", dc)
		}
		var err error
		v, err = probes.read(ctx, c)
		return err
	}); err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	last, known := w.seen[key]
	if !known && len(w.seen) >= 2*size {
		clear(w.seen)
	}
	w.seen[key] = v
	return !known || last != v, nil
}
