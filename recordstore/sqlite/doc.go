// Package sqlite is the SQLite backend of records (modernc.org/sqlite, pure
// Go): a recordstore.Backend and recordstore.Sweeper in one file.
//
// # Files on disk
//
// A store is configured by a path P (e.g. data/records.sqlite). The live
// file is LivePath(P) = <dir(P)>/v1/records.sqlite, where 1 is
// CatalogVersion; SQLite keeps records.sqlite-wal and records.sqlite-shm
// beside it. Folders are created 0700, the three files are 0600.
//
//	data/
//	  v1/                    0700
//	    records.sqlite       0600  the live file (WAL mode)
//	    records.sqlite-wal   0600
//	    records.sqlite-shm   0600
//
// Inside the file:
//
//	record_meta     key/value facts: catalog_version
//	record_kinds    one row per kind: name, lowercase name (unique),
//	                table name, schema JSON, created/updated times
//	record_streams  one row per stream ever created: its number no, id,
//	                kind, generation, high_seq, low_seq, total, sealed,
//	                times, expires_at, deleted (a tombstone keeps the
//	                number and makes generations keep increasing)
//	record_appends  one row per append: stream number, appended_at,
//	                from_seq, to_seq, generation (for Trim and retention)
//	<kind>          one table per kind, named like the kind: _seq_stream
//	                (the stream number), _seq, the two being the primary
//	                key, then the kind's columns typed TEXT, INTEGER or
//	                REAL; a UNIQUE index <kind>:key on (_seq_stream, key
//	                columns) when the kind has a key, and <kind>:ixN for
//	                its declared indexes
//
// Stored values are those of recordstore.Values: bools as 0/1, datetimes as
// recordstore.DatetimeLayout text, json as compact text, integers exactly.
// Times in the bookkeeping tables use the same datetime text. Kind names
// starting with record_ or sqlite_ are refused, and two kinds may not
// differ only in case (SQLite table names are case-insensitive).
//
// # Concurrency
//
// A Backend is safe for concurrent use. Writes go through one connection
// and one transaction at a time (BEGIN IMMEDIATE), so concurrent appends to
// a stream get contiguous, non-overlapping windows; rows are normalized
// before the write lock is taken. Reads use a separate pool of query_only
// connections and, thanks to WAL, never wait for a write in progress; a
// read sees every write committed before it started. Another process
// writing the same file waits for the lock (busy_timeout) instead of
// failing. Close waits for calls in flight; later calls return
// recordstore.ErrClosed. A background sweeper (Options.SweepInterval)
// removes expired streams and enforces row retention.
//
// # What survives a crash
//
// Every mutating call is one SQLite transaction: after it returns nil the
// change is in the WAL. With synchronous=NORMAL a power loss may undo the
// last transactions before a checkpoint, but never leaves one half applied;
// a process crash loses nothing that was committed. A call that returns an
// error has written nothing.
package sqlite
