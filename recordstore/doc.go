// Package recordstore is the core of records: the record model (streams,
// kinds, rows, windows, Meta, AppendResult), the Backend interface every
// store implements, the sentinel errors and their codes, and the Notifier
// that followers wait on.
//
// A stream is an append-only sequence of rows of one kind, numbered by a
// per-stream seq from 1. Deleting or expiring a stream and appending to it
// again starts a new generation at seq 1. A kind is a schema: typed columns,
// an optional key with a conflict policy (skip, replace, lww), retention.
//
// Values: Kind.Normalize is the one place a row's values are checked and
// put in stored form, whatever path the row takes (value.go). JSON text
// follows one strict grammar (internal/jsonx: UTF-8, no lone surrogate
// escape, no name twice in one object), datetimes RFC 3339 §5.6
// (datetime.go), and two rows have the same key exactly when
// Kind.AppendRowKey says so (rowkey.go).
//
// Optional capabilities of a backend are small interfaces found by type
// assertion: Sweeper (retention now), BatchAppender (batches applied exactly
// once, with a ledger; the owner package needs it) and ChangeSource (changes
// made by other processes). docs/extending.md says who uses each, and how to
// build a record family or a backend on this package.
//
// This package imports only the standard library and its own internal
// helpers (internal/fsutil, whose sync error is ErrFsync, and
// internal/jsonx). Backends live in sub-packages (recordstore/sqlite); the
// conformance suite every backend runs is recordstoretest.
//
// Concurrency: Kind values are plain data; a Notifier is safe for concurrent
// use. Backends document their own guarantees (see Backend).
package recordstore
