// Package records is the one way to open a store: Open wires the owner
// election (recordstore/owner) to the SQLite backend (recordstore/sqlite)
// and, where a process cannot read the store, to the submit-only backend
// (recordstore/submitonly), for every caller — the query command, the
// read API (recordstore/recordresults), the tenant fleet
// (recordstore/fleet) and the Drakkar recorder and cache.
//
// Any number of processes may Open the same path: one becomes the owner
// and writes; the others read the live file and write through the spool,
// and promote themselves when the owner goes away (unless
// Options.Owner.NoPromotion). A process whose store's owner runs a build
// with another catalog version opens detached (its reads fail with
// *owner.CatalogVersionError, its writes go through the spool, it never
// becomes the owner), and one opened with Options.ReadOnly takes no part
// in the election and writes nothing.
//
// Store, Writer and Backend are the names of the one instantiation of the
// owner package's generic types every caller uses: Store is
// owner.Store[Backend], and Backend, the interface a Store holds, is a
// *sqlite.Backend or a *submitonly.Backend (possibly wrapped, see
// Options.WrapSubmitOnly). Its value is the same for the store's whole life
// in the process, whatever the role.
//
// Options carries the owner's options whole (Options.Owner, an
// owner.Options): an option added to the owner reaches every caller of
// Open without a change here. Open fills in the few fields it owns
// (Path, Open, OpenDetached, CatalogVersion, ReadOnly) and refuses a value
// set in one of them.
//
// Spool codecs are registered on import: ndjson and ndjson.gz always, the
// Parquet codec (Owner.Format "parquet", and an owner ingesting a Parquet
// batch another process spooled) once recordstore/spool/parquet is linked
// in, as recordstore/recordresults and the query command do.
//
// A Store is safe for concurrent use. What is on disk is the owner's and
// the backend's: see owner.Open and sqlite.Open.
package records
