// Package cli is the query command: one cobra command per verb, wired to a
// recordstore.Backend opened on the --store path.
//
// The contract scripts rely on (docs/cli.md): success prints JSON on stdout
// (one object, or one object per line for lists and rows) and exits 0; a
// failure prints one line "query: <code>: <message>" on stderr and exits 1;
// a malformed command line prints "query: usage: <message>" and exits 2.
//
// Every command opens the store, does its work and closes it again, except
// scan --follow and serve, which hold it until they are told to stop
// (SIGINT or SIGTERM, delivered through the context given to Run). The
// spool commands work on the store's spool folder instead and never open
// the store for writing: spool publish reads a kind from the catalog
// through a read-only open (or from --schema) and publishes its batch by
// rename, without any lock.
package cli
