// The stream cache of a batch transaction: with group commit many small
// appends go to the same few streams, so the second and later appends to a
// stream read its row from memory, and its counters and record_appends
// window are written once, at the end of the transaction.

package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// streamCache holds the streams a batch transaction appended to. What it
// holds is either in the file already or pending: counters (dirty) and
// one appended window not yet in record_appends. It is written (flush)
// before anything else reads the stream from the file, and at the end of
// the transaction. It is used by one goroutine, inside one transaction.
type streamCache struct {
	b *Backend
	m map[string]*cachedStream
}

// cachedStream is one stream's row and what of it is pending.
type cachedStream struct {
	row    streamRow
	dirty  bool     // row's counters are not written yet
	pend   seqRange // an appended window not in record_appends yet
	pendOK bool
}

func newStreamCache(b *Backend) *streamCache {
	return &streamCache{b: b, m: map[string]*cachedStream{}}
}

// snapshot copies a stream's cached state, so that an entry rolled back to
// its savepoint can be undone in memory too (restore).
func (c *streamCache) snapshot(id string) (cachedStream, bool) {
	cs, ok := c.m[id]
	if !ok {
		return cachedStream{}, false
	}
	return *cs, true
}

func (c *streamCache) restore(id string, cs cachedStream, ok bool) {
	if !ok {
		delete(c.m, id)
		return
	}
	c.m[id] = &cs
}

// flush writes a stream's pending state and forgets it.
func (c *streamCache) flush(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	cs, ok := c.m[id]
	if !ok {
		return nil
	}
	delete(c.m, id)
	if cs.pendOK {
		if err := c.b.insertAppendTx(ctx, tx, cs.row.no, now, cs.pend.from, cs.pend.to, cs.row.generation); err != nil {
			return err
		}
	}
	if cs.dirty {
		return cs.row.putCounters(ctx, tx, c.b.ws)
	}
	return nil
}

// flushAll writes every stream's pending state.
func (c *streamCache) flushAll(ctx context.Context, tx *sql.Tx, now time.Time) error {
	for id := range c.m {
		if err := c.flush(ctx, tx, id, now); err != nil {
			return err
		}
	}
	return nil
}

// appendTx is Backend.appendTx through the cache. A stream met for the
// first time in the transaction, or one that is no longer live, or of a
// kind with row retention (whose appends trim by record_appends), takes
// the plain path, and is cached afterwards (except the last).
func (c *streamCache) appendTx(ctx context.Context, tx *sql.Tx, t *table, stream string, feed *rowFeed, now time.Time) (recordstore.AppendResult, error) {
	rowRetention := t.kind.Retention != nil && t.kind.Retention.Mode == recordstore.RetainRows
	cs, ok := c.m[stream]
	if ok && !rowRetention && cs.row.live(recordstore.FormatDatetime(now)) {
		return c.appendCachedTx(ctx, tx, t, cs, feed, now)
	}
	if err := c.flush(ctx, tx, stream, now); err != nil {
		return recordstore.AppendResult{}, err
	}
	res, s, err := c.b.appendStreamTx(ctx, tx, t, stream, feed, now)
	if err == nil && !rowRetention {
		c.m[stream] = &cachedStream{row: s}
	}
	return res, err
}

// appendCachedTx appends to a live cached stream: the checks of
// openGenerationTx on the cached row, the rows inserted, the window added
// to the pending one (appends of one transaction to one generation are
// contiguous).
func (c *streamCache) appendCachedTx(ctx context.Context, tx *sql.Tx, t *table, cs *cachedStream, feed *rowFeed, now time.Time) (recordstore.AppendResult, error) {
	s := cs.row
	switch {
	case s.kind != t.kind.Name:
		return recordstore.AppendResult{}, schemaConflict("stream %s has kind %s, not %s", s.id, s.kind, t.kind.Name)
	case s.sealed:
		return recordstore.AppendResult{}, sealed(s.id)
	}
	res := recordstore.AppendResult{Stream: s.id, Kind: t.kind.Name, From: s.high + 1}
	if err := t.insertRows(ctx, tx, c.b.txConn, &s, feed, &res); err != nil {
		return recordstore.AppendResult{}, err
	}
	res.To = s.high + res.Appended
	if res.Appended == 0 {
		return res, nil
	}
	// Seqs of a generation only grow: this window follows the pending one.
	if cs.pendOK {
		cs.pend.to = res.To
	} else {
		cs.pend, cs.pendOK = seqRange{from: res.From, to: res.To}, true
	}
	if err := t.advance(ctx, tx, &s, &res); err != nil {
		return recordstore.AppendResult{}, err
	}
	s.updated = recordstore.FormatDatetime(now)
	cs.row, cs.dirty = s, true
	return res, nil
}
