// Package recorder is the Drakkar flight recorder of one worker: the events,
// state snapshots and config row it records, the filters that trim them, the
// in-memory buffer they wait in, and (in the files that write SQLite) the
// flush, rotation, sealing and move into the shared history folder.
//
// The in-memory half, in this package's pure files:
//
//	config.go  Config: the storage.dir / shared.dir / ui.* keys, defaults,
//	           --set parsing and validation, the mode helpers
//	event.go   Event: one row of the events table, its builders, Values,
//	           ParseEventJSON for rows given as JSON by the CLI
//	state.go   State (worker_state rows), WorkerInfo and ConfigRow
//	           (the single worker_config row)
//	redact.go  what is hidden before the worker_config row is written
//	filter.go  Filter: the recording-side knobs applied before the buffer
//	buffer.go  Buffer: the capped queue between recording and flushing
//
// Concurrency: Buffer is safe for concurrent use. Config, Event, State and
// Filter are values; a Filter may be shared by goroutines (Admit changes only
// the event it is given). Nothing in these files does I/O: an event is on
// disk only once a flush has committed it, so what a crash loses is what the
// Buffer held.
//
// Byte rules (drakkar-local-databases.md "Encodings", drakkar-notes.md §3–§4):
// JSON columns are canonical JSON (sorted keys, compact, raw UTF-8); ts-like
// columns are REAL Unix seconds and dt-like columns are UTC
// "YYYY-MM-DD HH:MM:SS.mmm" (milliseconds truncated), both derived from one
// clock reading truncated to whole microseconds.
package recorder
