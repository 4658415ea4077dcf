// Package recordresults is the batteries-included way to use records: Open
// wires owner election (recordstore/owner) to the SQLite backend
// (recordstore/sqlite) for a store path, and Handler serves the HTTP read
// API (list, meta, scan, follow, owner status and a small HTML page) over
// any backend; `query serve` mounts it.
//
// Any number of processes may Open the same path: one becomes the owner and
// writes; the others read the live file and write through the spool, and
// promote themselves when the owner goes away. The *Store's Backend is the
// same value for the process's whole life, whatever its role: a
// *sqlite.Backend, or in a process whose store's owner runs another
// catalog version, a *submitonly.Backend (see Open and Backend).
//
// Store and Writer are the names of the common case: the owner package's
// generic Store and Writer over Backend (owner.Store[Backend],
// owner.Writer[Backend]). Use them rather than spelling the instantiation
// out.
//
// Errors of the HTTP API carry the code and message of recordstore.Code and
// recordstore.Message, the same ones the query command prints.
package recordresults
