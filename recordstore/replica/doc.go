// Package replica replicates a store's SQLite file continuously to object
// storage (any S3-compatible server) or a plain folder, restores it with
// proof, and verifies a replica against the live store. It builds on
// Litestream used as a Go library: Litestream ships the write-ahead log's
// frames as LTX files and restores a database from them; this package
// decides when replication runs (only in the owner), what an address may
// say, and what a restore must prove before it replaces anything.
//
// Replicator (New, or Factory for a fleet) is the owner.Replicator a store
// is opened with (owner.Options.Replica): the owner starts it when it takes
// the store, ships through it, waits on it for WriteOptions.Replicated, and
// stops it — after a last ship — before it lets the store go. While it runs
// it alone checkpoints the live file's WAL (the engine runs with
// sqlite.Options.NoCheckpoint). See docs/replication.md.
package replica
