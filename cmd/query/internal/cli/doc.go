// Package cli is the query command: one cobra command per verb, wired to
// the store on the --store path.
//
// The contract scripts rely on (docs/cli.md): success prints JSON on stdout
// (one object, or one object per line for lists and rows) and exits 0; a
// failure prints one line "query: <code>: <message>" on stderr (the code
// and message of recordstore.Code and recordstore.Message) and exits 1; a
// malformed command line prints "query: usage: <message>" and exits 2.
//
// Every command that uses the store opens it through owner election
// (records.Open), does its work and closes it again; with
// --read-only, or for a read when the store cannot be written here, it
// opens it read-only instead, taking no part in the election. When no process
// owns the store, the command owns it for its length (writes directly,
// ingests the spool, drains it on close); when another process owns it,
// the command reads the live file and its writes go through the spool to
// the owner, whose exact result comes back. When that owner runs a build
// of another catalog version the command is detached: every read fails
// with catalog_version, writes still go through the spool (append then
// needs --schema, since it cannot read the kind from the catalog), and it
// never takes the store over. scan --follow and serve hold
// the store until they are told to stop (SIGINT or SIGTERM, delivered
// through the context given to Run). status only reads the owner's state
// file and asks its socket. The spool commands work on the store's spool
// folder and never take the lock: spool publish reads a kind from the
// catalog through a read-only open (or from --schema) and publishes its
// batch by rename.
package cli
