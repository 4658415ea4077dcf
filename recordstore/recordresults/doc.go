// Package recordresults is the read side of records: Handler serves the
// HTTP read API (list, meta, scan, follow, owner status and a small HTML
// page) over any backend, and `query serve` mounts it; a Reader runs the
// query model; RegisterResultType declares a kind from a Go struct.
//
// A store is opened with records.Open (package recordstore/records), which
// returns the *records.Store the functions here take (RegisterResultType)
// and whose Backend they read (Handler, NewReader). Its one-call writes and
// its bulk Writer work the same in every role that can write;
// Example_auditLog builds a small record family with them, and
// docs/extending.md says which to use when.
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
