// Package sqlite is the SQLite backend of records (modernc.org/sqlite, pure
// Go): one type, Backend, that is a recordstore.Backend,
// recordstore.Sweeper, recordstore.BatchAppender and
// recordstore.ChangeSource over a store's data held in a single SQLite
// database file (the live file, with its -wal and -shm; see below).
//
// # Files on disk
//
// A store is configured by a path P (e.g. data/records.sqlite). The live
// file is LivePath(P) = <dir(P)>/v1/<base(P)> (data/v1/records.sqlite),
// where 1 is CatalogVersion; SQLite keeps records.sqlite-wal and
// records.sqlite-shm beside it. Folders are created 0700, the three files
// are 0600.
//
//	data/
//	  v1/                    0700
//	    records.sqlite       0600  the live file (WAL mode)
//	    records.sqlite-wal   0600
//	    records.sqlite-shm   0600
//
// Inside the file:
//
//	record_meta     key/value facts: catalog_version, epoch
//	record_kinds    one row per kind: name, lowercase name (unique),
//	                table name, schema JSON, created/updated times
//	record_streams  one row per stream ever created: its number no, id,
//	                kind, generation, high_seq, low_seq, total, sealed,
//	                times, expires_at, deleted (a tombstone keeps the
//	                number and makes generations keep increasing)
//	record_appends  one row per append (or run of appends in one
//	                transaction) that stored rows: stream number,
//	                appended_at, from_seq, to_seq, generation (for Trim and
//	                retention)
//	record_spool_batches
//	                the ledger, created by the first AppendBatch: one row
//	                per applied batch — batch_id (primary key), producer,
//	                producer_seq, epoch, outcome, results (JSON of the entry
//	                results and the batch error), ingested_at; indexed by
//	                (producer, producer_seq) and by ingested_at
//	<kind>          one table per kind, named like the kind: _seq_stream
//	                (the stream number), _seq, the two being the primary
//	                key, then the kind's columns typed TEXT, INTEGER or
//	                REAL; a UNIQUE index <kind>:key on (_seq_stream, key
//	                columns) when the kind has a key, and <kind>:ixN for
//	                its declared indexes
//	<bound table>   a bound kind's table (recordstore.BoundTable), made by
//	                the caller's DDL verbatim and holding one stream: the
//	                seq is its INTEGER PRIMARY KEY, or its rowid (bound.go)
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
// # Memory
//
// An open backend holds its reader pool's connections (Options.ReadConns;
// one is opened at Open, more as reads overlap) and, when writable, the
// writer connection. Most of a connection's memory is SQLite's own: its
// page cache, the parsed schema and a lookaside buffer for small
// allocations. A program that keeps many stores open (a fleet server) can
// turn the lookaside off for the whole process with ConfigureLookaside,
// called before any connection is opened.
//
// # Batches and the ledger
//
// AppendBatch applies batches exactly once: many in one transaction (group
// commit), each entry in its own savepoint (a failing entry is rolled back
// and reported, the others commit), each batch with its ledger row in the
// same transaction as its data. A batch id found in the ledger writes
// nothing and returns the recorded result; BatchOutcome reads it, from any
// process. A batch's own schemas are reconciled with the catalog before the
// transaction: new kinds are declared and new columns added, nothing else
// about a stored kind ever changes. The rows' appended_at is the time of
// the transaction, so retention counts from ingest, not from when a
// producer wrote them.
//
// # The epoch
//
// record_meta holds an epoch, incremented in its own transaction every time
// a process opens the file writable or promotes a read-only backend. Every
// ledger row carries the epoch of the writer that applied it, and
// AppendBatch checks inside its transaction that the file's epoch is still
// its own: a writer that was paused while another process took the store
// over fails with ErrFenced and stops writing.
//
// # Read-only mode
//
// Options.ReadOnly opens an existing live file through the reader pool only:
// no sweeper, nothing written. Reads work as usual. Every mutation is first
// checked locally (names, kind known, rows valid, no repeated key, stream of
// the right kind and not sealed, ttl positive, stream live), so that an
// obviously bad write fails at once, then handed to Options.Submit as a
// one-entry batch; the entry's result, or its error (a
// *recordstore.BatchError that errors.Is matches with its sentinel), is
// returned. Without Submit mutations fail with recordstore.ErrReadOnly. A
// kind is declared through a declare-only batch and then read from the
// catalog. The backend follows the file's changes (PRAGMA data_version,
// see WatchChanges) to reload kinds and columns other processes added and
// to wake its Notifier, so followers in this process see the owner's
// appends; PollChanges looks at once (the owner package calls it on each
// of the owner's commit notices) and SetPushed slows the polling while
// those notices arrive. Promote makes the same *Backend writable in place.
//
// # Another catalog version
//
// The live file's path carries CatalogVersion, so a build with another
// catalog version than the store's owner has no file it could read: Open
// read-only fails with ErrNotFound there. Such a process writes through
// the spool with the submitonly package's backend instead (see
// records.Open); this package only ever opens a live file.
//
// # Caller-named live files, Rotate and Seal
//
// Options.LiveFile names the live file instead of LivePath(P). Rotate
// switches a writable backend to a new live file the caller names: the
// new file gets the bookkeeping tables with the same epoch, every kind of
// the catalog and a copy of the whole ledger in one transaction, then the
// writer, statements and readers switch over and every connection of the
// old file is closed. Options.CarryFrom copies the ledger of earlier live
// files into a file that has none yet as Open (or Promote) creates its
// bookkeeping tables, for an owner that starts a new file after a crash.
// Together they apply a batch once across the whole sequence of files.
// Seal turns a file nobody writes into a standalone file: bookkeeping
// tables dropped, journal_mode=DELETE, no -wal or -shm; it is idempotent
// and finishes what a failed or killed Seal left.
//
// # What survives a crash
//
// Every mutating call is one SQLite transaction: after it returns nil the
// change is in the WAL. With synchronous=NORMAL a power loss may undo the
// last transactions before a checkpoint, but never leaves one half applied;
// a process crash loses nothing that was committed. A call that returns an
// error has written nothing (AppendBatch: no data and no ledger row, though
// kinds and columns its batches declared stay declared). A batch's ledger
// row commits with its data, so after a crash a batch is either wholly
// applied and in the ledger, or not applied at all.
//
// Sync makes the commits so far survive a power loss by flushing the
// WAL's data (fdatasync on Linux, fsync elsewhere): SQLite only writes
// frames into the WAL and changes its size, both of which that flushes;
// the file's times, which it does not, are read by nothing.
package sqlite
