// Package owner elects, among all processes that open one store, the single
// owner that writes it, and lets every other process write through it and
// get its exact result back: a small batch a process waits for goes over
// the owner's control socket (the fast path, ActionAppend: answered once
// the owner's group commit holding it is durable), everything else through
// the spool — and so does that batch, under the same id, whenever the fast
// path cannot deliver it.
//
// Files beside the configured path P (see Paths):
//
//	P.lock        flock held by the owner for its whole tenure; the only
//	              liveness truth (the kernel drops it when the owner dies)
//	P.owner.json  the owner's advisory State, replaced atomically
//	P.sock        the control socket (protocol 1), or a hashed name in the
//	              temp folder when P.sock is too long; the real path is in
//	              the state file
//	P.spool/      tmp, incoming, failed, trash (see package spool)
//
// Correctness rests on files and SQLite alone: the flock, rename-committed
// spool folders, and a ledger row committed in the same transaction as the
// data; a batch folder leaves incoming/ only after the backend's Sync has
// made its commit survive a power loss. The socket only makes things fast: a dead or missing socket never
// loses or duplicates data, it only sends waiters back to polling and
// writers back to the spool. A batch sent over the socket is answered only
// after the owner's Sync, and its id is in the ledger as any batch's: a
// producer that gets no answer asks the ledger, then spools the batch,
// which is then applied once.
//
// A backend that is a Rotator lets the owner switch its live file to one
// the caller names (Store.Rotate): between two batches, after the applied
// ones left incoming/, with the state file rewritten to name the new file.
// The non-owners of such a store write through the spool only
// (Options.NoPromotion and a submit-only backend).
//
// The package is generic over its target backend and never imports a
// concrete one; recordresults wires it to recordstore/sqlite.
package owner
