// Package dbfiles is the pure file layer of the Drakkar worker databases:
// the names and patterns of every file a worker creates, their modes, the
// time formats, canonical JSON, the DDL text as it must appear in
// sqlite_master, and the codecs of the meta file and the archive lock body.
//
// Everything here is normative byte for byte
// (spec/drakkar-local-databases.md, "The files", "Schemas", "Encodings",
// "The meta file", "The archive lock"; spec/drakkar-notes.md §1–§4): a Go
// worker and a Python worker of one fleet read each other's files.
//
// The package has no state and all of it is safe for concurrent use. Only
// ReadMeta and WriteMeta touch the disk; WriteMeta makes its file durable
// through recordstore/fsutil.
package dbfiles
