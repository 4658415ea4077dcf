// Package recordresults is the batteries-included way to use records: Open
// wires owner election (recordstore/owner) to the SQLite backend
// (recordstore/sqlite) for a store path, and Handler serves the HTTP read
// API (list, meta, scan, follow, owner status and a small HTML page) over
// any backend; `query serve` mounts it.
//
// Any number of processes may Open the same path: one becomes the owner and
// writes; the others read the live file and write through the spool, and
// promote themselves when the owner goes away. A process whose store's owner
// runs a build with another catalog version opens detached (its reads fail,
// its writes go through the spool, it never becomes the owner), and one
// opened with Options.ReadOnly takes no part in the election and writes
// nothing. The *Store's Backend is the same value for the process's whole
// life, whatever its role: a *sqlite.Backend, or in a detached process a
// *submitonly.Backend (see Open and Backend).
//
// The Store's one-call writes (Append, AppendBuffer, AppendFrom, Mutate,
// DeclareKinds, Publish and Await) and its bulk Writer work the same in every
// role that can write; Example_auditLog builds a small record family with
// them, and docs/extending.md says which to use when.
//
// Store and Writer are the names of the common case: the owner package's
// generic Store and Writer over Backend (owner.Store[Backend],
// owner.Writer[Backend]). Use them rather than spelling the instantiation
// out.
//
// Reading goes through one query model (Query, ParseQuery; the contract
// is docs/reading.md): a Reader runs it over any backend — in SQL on a
// sqlite.Backend (recordstore.RowQuerier), by Scan and Match elsewhere —
// as a page with a cursor (Page), every row (Rows), an export in NDJSON,
// CSV or Parquet (Export), or a follow (Follow). A Reader also holds the
// per-kind search columns and the registered SQL views (RegisterView).
// RegisterResultType declares a kind from a Go struct and appends and
// scans its values. A Reader and a ResultType are safe for concurrent use.
//
// Errors of the HTTP API carry the code and message of recordstore.Code and
// recordstore.Message, the same ones the query command prints.
package recordresults
