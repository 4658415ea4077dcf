// Package merge is the merge engine of the Drakkar layer: one engine for
// POST /api/v1/debug/merge, the archive pass and `query drakkar merge`. It
// folds sealed recorder files and earlier merge results (or gunzipped
// archives) into one file of the merged format (spec/drakkar-notes.md §2,
// dbfiles.MergedDDL):
//
//	workers        one row per recorder source (its worker_config, or a
//	               placeholder named after the file), every row of a
//	               merged source kept as it was
//	events         the sources' events, worker_id pointing into workers
//	worker_states  the sources' worker_state rows, likewise
//
// How a merge runs (Merge):
//
//  1. The output is built in a dot-prefixed temp file beside it, created
//     0600, with a rollback journal (journal_mode=DELETE).
//  2. Each source is opened read-only with immutable=1 (no lock, no
//     sidecar, nothing written), ATTACHed to the output's connection, and
//     copied table by table with INSERT … SELECT, events ordered by ts and
//     states by updated_at. SQLite streams the rows: memory is bounded by
//     its page cache, not by the size of a source. Each source is one
//     transaction, so it is merged whole or not at all — unless it fails
//     part-way (a corrupt page, a row the merged format refuses): then
//     the salvage reads it again row by row on a connection of its own
//     and keeps the rows read before the failure, in order (partial;
//     Options.AllOrNothing turns this off).
//  3. A source whose header says WAL (drakkar's Python merge leaves one in
//     its archives) is never opened where it is: opening such a file
//     read-only creates -wal and -shm beside it. It is copied to a
//     private temp file first, switched to a rollback journal there, and
//     read from the copy.
//  4. A source that cannot be opened or read is skipped and reported with
//     its cause; the other sources are merged. Callers delete only the
//     sources reported merged (Result.Merged), never a partial one.
//  5. The indexes are created once every row is in, the file is closed,
//     fsynced and renamed to its final name with recordstore/fsutil
//     (rename, then folder fsync).
//
// On any error of the merge itself (the context ends, the output cannot be
// written, every source is skipped) the temp file and its journal are
// removed and nothing exists at the output's name. Sources are never
// written, renamed or deleted by this package.
//
// Merge may run concurrently with other merges into other outputs; one
// call uses one SQLite connection and is not safe to share.
package merge
