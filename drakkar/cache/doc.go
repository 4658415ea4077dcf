// Package cache is the Drakkar LWW cache of one worker
// (<storage.dir>/<worker>-cache.db, drakkar-local-databases.md "The
// files", "Write patterns", "Cache exchange"), built on the engine:
// cache_entries is a bound kind with the lww conflict policy (version
// updated_at_ms, tiebreak origin_worker_id: strictly newer wins, on a tie
// the smaller origin wins, else the stored row stays), so the local flush
// and the rows pulled from peers are applied by one code path (Apply, an
// append through the worker's store) and cannot disagree.
//
// Files:
//
//	config.go    Config: the cache.* and fleet.cache_exchange.* keys
//	entry.go     Entry, Scope, the bound kind and its rows
//	memory.go    the memory layer: dirty entries and an LRU of clean ones
//	cache.go     Open, Get, Set, Delete, Close
//	flush.go     Flush, Cleanup, Apply (the one LWW path), the marks
//	reader.go    the reader connection: point reads, dumps, pages
//	exchange.go  the peer route GET /api/v1/peer/cache/changes
//	pull.go      the pull of peers' rows every exchange interval
//	metrics.go   drakkar_cache_* collectors
//
// Concurrency: every method of Cache is safe for concurrent use. Get and
// Set touch memory only (Get falls back to the reader connection on a
// miss; Set reads the stored row once to keep its created_at_ms); Flush,
// Cleanup and the pull are serialized with each other.
//
// What survives a crash: every committed flush (WAL, synchronous=NORMAL:
// an application crash loses nothing committed; a host crash may lose the
// last commits). The dirty entries of at most one flush interval are lost.
// Pull cursors live in memory: after a restart every peer is pulled from
// the start again, which the LWW rule makes harmless.
//
// Deletes: the spec has no tombstones. Delete writes the entry again,
// already expired (expires_at_ms = now), through the same
// flush: it is not served from then on and Cleanup removes it. It does not
// propagate: the exchange serves no expired row, so a peer's copy lives
// until its own expiry (and a peer that originated the key serves it
// again to a worker that pulls it from the start, after a restart).
package cache
