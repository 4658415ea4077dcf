// Package submitonly is the backend of a process that can write a store but
// not read it: its writes reach the store's owner through a Submit
// function (the owner package's spool), its reads fail.
//
// The owner package opens one for a process whose build has another
// catalog version than the store's owner (owner.RoleDetached): the live
// file's path carries the catalog version, so such a build has no file it
// could read, while spool manifests do not depend on the catalog version.
// records.Open wires it with the SQLite backend.
//
// Open touches no file. Every read — Meta, Streams, Scan, Kinds, Kind,
// BatchOutcome, ProducerSeq, WatchChanges — returns an error wrapping the
// cause it was opened with (the owner package passes its
// *CatalogVersionError), and Promote refuses the same way. The owner's own
// work (AppendBatch, Sweep, SweepBatches, Sync) is refused with
// recordstore.ErrReadOnly. Mutations go to Submit as one batch each:
// DeclareKind submits a declare-only batch and keeps the kind in this
// process; Append checks the rows against a kind this process declared
// (another kind is refused with an error wrapping recordstore.ErrNotFound:
// declare it first) and submits them with that declaration as the batch's
// schema; Seal, Reopen, Expire, Trim and Delete are submitted unchecked,
// the owner deciding whether the stream is live. Without Submit every
// mutation fails with recordstore.ErrReadOnly.
//
// A Backend is safe for concurrent use. It holds nothing on disk, so
// nothing of it survives a crash but what the owner applied.
package submitonly
