// Writing the file: Apply (the one LWW path, for the local flush and the
// rows pulled from peers), Flush, Cleanup and the card marks.

package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// FailingRepeatedly is how many flushes in a row must fail before
// cache_flush_failing_repeatedly is logged.
const FailingRepeatedly = 5

// Apply writes entries to the file in one transaction, each through the
// engine's lww rule on key (strictly greater updated_at_ms wins; on a tie
// the smaller origin_worker_id; else the stored row stays). It is the one
// path of both the local flush and the pulled rows. Every entry is
// checked first (ErrBadEntry: nothing written); one key given twice is
// refused (the engine's rule for one append). The memory layer forgets
// the clean entries of the applied keys. In a process that does not own
// the cache the rows go through the spool and Apply waits for the owner's
// result. On error nothing of entries is in the file.
func (c *Cache) Apply(ctx context.Context, entries []Entry) (recordstore.AppendResult, error) {
	res, err := c.apply(ctx, entries)
	if err != nil {
		return res, err
	}
	c.mu.Lock()
	for _, e := range entries {
		c.mem.forget(e.Key)
	}
	c.mu.Unlock()
	return res, nil
}

// apply is Apply without its memory step (the flush keeps its entries in
// memory itself).
func (c *Cache) apply(ctx context.Context, entries []Entry) (recordstore.AppendResult, error) {
	if !c.Engine() {
		return recordstore.AppendResult{}, ErrOff
	}
	if len(entries) == 0 {
		return recordstore.AppendResult{}, nil
	}
	rows := make(recordstore.ValueRows, len(entries))
	for i, e := range entries {
		if err := e.Check(); err != nil {
			return recordstore.AppendResult{}, err
		}
		rows[i] = e.values()
	}
	if c.faults.apply != nil {
		if err := c.faults.apply(); err != nil {
			return recordstore.AppendResult{}, fmt.Errorf("apply %d cache entries: %w", len(entries), err)
		}
	}
	var opts owner.AppendOptions
	if !c.Owner() {
		opts.Declare = &c.kind
	}
	res, err := c.store.AppendBuffer(ctx, Stream, &c.kind, rows, opts)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("apply %d cache entries: %w", len(entries), err)
	}
	return res.AppendResult, nil
}

// Flush writes the dirty entries now, in one transaction: the dirty map is
// swapped for an empty one, its cluster and global entries are stamped
// above the newest such row this worker committed before (updated_at_ms
// raised to that plus one where it is not above it: a peer's cursor may
// stand on that row, and the exchange serves only rows after the cursor),
// its entries applied (Apply), and on failure
// put back, except the keys written again meanwhile (the newer live write
// wins). After a commit the marks rise to the newest cluster and global
// rows this worker wrote, and the flushed entries stay in memory as clean
// ones (those that lost to a stored row are forgotten). In a process that
// does not own the cache there is nothing to flush. On error the file
// holds nothing of this flush.
func (c *Cache) Flush(ctx context.Context) error {
	if !c.Owner() {
		return nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return nil
	}
	if c.stale.Swap(false) {
		c.refreshMarks(ctx)
	}
	c.mu.Lock()
	batch := c.mem.takeDirty()
	floor, gen := c.ownMax, c.mem.gen
	c.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	entries := make([]Entry, 0, len(batch))
	for _, e := range batch {
		if e.Scope != ScopeLocal && e.OriginWorkerID == c.cfg.WorkerName && e.UpdatedAtMS <= floor {
			// Above every row committed before: a peer's cursor may
			// stand at the newest of them.
			e.UpdatedAtMS = floor + 1
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	start := time.Now()
	res, err := c.apply(ctx, entries)
	c.met.flushSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		c.flushFailed(batch, err)
		return err
	}
	if c.faults.afterFlush != nil {
		c.faults.afterFlush()
	}
	c.flushed(ctx, entries, res, gen)
	return nil
}

// flushFailed restores a failed flush's entries and counts the failure.
func (c *Cache) flushFailed(batch map[string]Entry, err error) {
	c.met.flushFailures.Inc()
	c.mu.Lock()
	c.mem.restore(batch)
	c.fails++
	fails := c.fails
	c.mu.Unlock()
	c.log.Warn("cache_flush_failed", "entries", len(batch), "error", err)
	if fails == FailingRepeatedly {
		c.log.Error("cache_flush_failing_repeatedly", "failures", fails, "error", err)
	}
}

// flushed keeps the flushed entries as clean ones and raises the marks.
// gen is the memory layer's generation before the flush's apply: when
// something was forgotten since (a pulled or spooled row applied), the
// flushed entries may no longer be the file's and are forgotten instead.
func (c *Cache) flushed(ctx context.Context, entries []Entry, res recordstore.AppendResult, gen uint64) {
	c.met.flushedEntries.Add(float64(len(entries)))
	c.mu.Lock()
	c.fails = 0
	c.mem.doneFlushing()
	keep := c.mem.gen == gen
	if res.Skipped == 0 {
		for _, e := range entries {
			if _, again := c.mem.dirty[e.Key]; !again {
				if keep {
					c.mem.put(e)
				} else {
					c.mem.forget(e.Key)
				}
			}
			if m, ok := c.marks[e.Scope]; e.Scope != ScopeLocal && e.OriginWorkerID == c.cfg.WorkerName && (!ok || m.Less(cursorOf(e))) {
				c.marks[e.Scope] = cursorOf(e)
				c.ownMax = max(c.ownMax, e.UpdatedAtMS)
			}
		}
		c.mu.Unlock()
		return
	}
	for _, e := range entries {
		if e.Scope != ScopeLocal && e.OriginWorkerID == c.cfg.WorkerName {
			c.ownMax = max(c.ownMax, e.UpdatedAtMS)
		}
		if _, again := c.mem.dirty[e.Key]; !again {
			c.mem.forget(e.Key) // the file holds the survivor
		}
	}
	c.mu.Unlock()
	// Some entries lost to stored rows: read the marks again.
	c.refreshMarks(ctx)
}

// refreshMarks reads the marks from the file again.
func (c *Cache) refreshMarks(ctx context.Context) {
	m, err := c.rd.marks(ctx, c.cfg.WorkerName)
	if err != nil {
		c.stale.Store(true)
		c.log.Warn("cache_marks_failed", "error", err)
		return
	}
	c.setMarks(m)
}

// setMarks replaces the marks read from the file and raises ownMax to
// them.
func (c *Cache) setMarks(m map[Scope]Cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marks = m
	for _, cur := range m {
		c.ownMax = max(c.ownMax, cur.MS)
	}
}

// Cleanup deletes the rows expired at now (expires_at_ms at or before
// it) and returns how many went. Only the owner cleans; elsewhere it
// does nothing. On error nothing is deleted.
func (c *Cache) Cleanup(ctx context.Context) (int64, error) {
	if !c.Owner() {
		return 0, nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return 0, nil
	}
	b, ok := any(c.store.Backend()).(*sqlite.Backend)
	if !ok {
		return 0, errNotOwner
	}
	n, err := b.DeleteWhere(ctx, Stream, "expires_at_ms IS NOT NULL AND expires_at_ms <= ?", c.nowMS())
	if errors.Is(err, recordstore.ErrNotFound) {
		return 0, nil // nothing was ever written
	}
	if err != nil {
		c.log.Warn("cache_cleanup_failed", "error", err)
		return 0, err
	}
	if n > 0 {
		c.forgetClean()
		c.met.expired.Add(float64(n))
		c.log.Debug("cache_cleanup", "deleted", n)
	}
	return n, nil
}

// Marks returns, for scopes cluster and global, the cursor of the newest
// row this worker wrote (read at start, raised after every committed
// flush); a scope with none is absent. The registry card carries them.
func (c *Cache) Marks() map[Scope]Cursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Scope]Cursor, len(c.marks))
	for s, m := range c.marks {
		out[s] = m
	}
	return out
}

// Dirty is how many entries wait for the next flush.
func (c *Cache) Dirty() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mem.dirty)
}

// CardFeatures are the features of this worker's registry card: the
// marks and the resync count when it serves the exchange, none
// otherwise.
func (c *Cache) CardFeatures() registry.Features {
	if !c.cfg.Exchange || !c.Owner() {
		return registry.Features{}
	}
	f := registry.Features{Cache: map[string]registry.Mark{}, CacheResync: c.resync.Load()}
	for s, m := range c.Marks() {
		f.Cache[string(s)] = registry.Mark{MS: m.MS, Key: m.Key}
	}
	return f
}
