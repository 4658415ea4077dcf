// Package fleet keeps one records store per tenant or per routing slot
// under one root folder, so that one tenant's writes never queue behind
// another's and a tenant's data is one file to back up, move or delete.
//
// Layout: a path template relative to the root places each key's store
// ("{bucket}/{tenant}.db" by default). The store's file is the engine's
// live SQLite file and its configured path at once, so its engine files lie
// beside it:
//
//	<root>/<bucket>/<tenant>.db             the store (live SQLite file)
//	<root>/<bucket>/<tenant>.db-wal, -shm   SQLite's sidecars
//	<root>/<bucket>/<tenant>.db.lock        the owner's flock
//	<root>/<bucket>/<tenant>.db.owner.json  the owner's state
//	<root>/<bucket>/<tenant>.db.spool/      the store's spool
//	<root>/<bucket>/.staging-*/             a create or import in progress
//	<root>/.fleet-index                     List's identity cache (index.go)
//
// Every store records its key in the table fleet_identity when it is
// created; a file that records another key is refused (ErrMisplaced).
// List and ListPage remember the identities they read in the root's
// identity index, keyed by each file's stat, and open only the files it
// does not know unchanged; nothing that opens or writes a store reads it.
//
// Concurrency: a Fleet is safe for concurrent use. Each store has its own
// owner election (recordstore/owner), so several processes can open one
// root: the first to open a store owns it, the others read it and write
// through its spool. In one process, the first Acquire of a key opens its
// store and concurrent ones share that open; an LRU closes idle stores.
// An open and a Delete in two processes never interleave: each holds an
// flock on the root folder (shared by an open until its store is open,
// exclusive by a delete while it removes one; see rootlock.go), so a
// deleted store is never brought back by an open that checked it before.
//
// Crash safety: a store is created in a staging folder and published with
// a link that never replaces a file, then the folder is fsynced: after a
// crash a store is absent or complete. A staging folder left by a crash
// is never read as a store.
package fleet
