// Package spool is the on-disk hand-off of rows from any process to the
// owner of a store: rename-committed batch folders, each holding a
// manifest (format 1) and data files in a registered codec. The format is
// a contract between builds and processes; docs/spool-format.md specifies
// it byte for byte.
//
// # Layout
//
// Beside the store's configured path P (folders 0700, files 0600):
//
//	P.spool/
//	├── tmp/                          batches being written; never listed
//	│   └── <instance>-<id>/
//	├── incoming/                     committed batches, oldest first by name
//	│   └── <created %020d>-<instance>-<seq %012d>-<id>/
//	│       ├── manifest.json         format 1: producer, schemas, entries
//	│       ├── e00001.ndjson         one data file per append entry with rows
//	│       └── e00003.ndjson.gz
//	├── failed/                       refused batches, same names
//	│   └── <batch>/error.json        why and when (plus the batch's files)
//	└── trash/                        ingested batches, removed by GC
//
// created is Unix nanoseconds, instance 16 lowercase hex characters (one
// per producer process), seq the producer's batch counter (only grows
// within an instance), id 32 lowercase hex characters.
//
// # Publishing and crashes
//
// Publish writes tmp/<instance>-<id>/, fsyncs every file and the folder,
// then renames the folder into incoming/ (the single commit point) and
// fsyncs incoming/ — all through recordstore/fsutil. A producer
// that dies at any step leaves either nothing in incoming/ or the complete
// batch; a half-written batch stays in tmp/, is never listed, and GC
// removes it after 24 hours. Readers therefore never see a partial batch,
// and they check everything anyway: a batch folder is a foreign input.
//
// # Who does what, concurrently
//
// Any number of processes may publish at once: their tmp folders and batch
// names never collide (random ids). Only the owner of the store (the
// process holding P.lock) lists incoming/, loads, ingests, moves batches to
// failed/ or trash/ and runs GC; the CLI may also list, inspect and Retry.
// A Dir is safe for concurrent use by goroutines. A Writer is safe for
// concurrent use; a Folder and an EntryReader are not.
//
// # Loading
//
// Load refuses, with a *ValidationError naming the batch and wrapping a
// sentinel (ErrManifestFormat, ErrBadManifest, ErrUnsafePath, ErrChecksum,
// ErrRowCount, ErrUnknownCodec, ErrTooManyRows, ErrTooLarge, or
// recordstore.ErrInvalid for a row that does not fit its schema), anything
// that is not exactly a valid batch. Rows are streamed: the SHA-256 is
// checked in one read before decoding, and the row count and caps while
// decoding, so a hostile file (a gzip bomb, a line of a gigabyte) costs at
// most the configured Limits in memory.
//
// # Inline batches
//
// EncodeInline and DecodeInline carry a small batch (at most
// MaxInlineBytes) as one byte string instead of a folder: the manifest and
// each append entry's NDJSON data, checked on decoding exactly as a loaded
// folder is. A producer sends one over the owner's control socket (the
// owner package's append action); nothing of it is on disk until the owner
// commits it.
//
// # Codecs
//
// "ndjson" and "ndjson.gz" are built in; "parquet" registers itself when
// recordstore/spool/parquet is imported. The ndjson decoder is a
// schema-aware scanner that fills recordstore.Values directly; it yields
// the same values as encoding/json followed by recordstore.Kind.Normalize,
// so a row that travels through the spool is stored byte-identical to a
// direct append.
//
// # Fuzz targets
//
// The fuzz targets of this package (also listed, one "pkg FuzzName" per
// line, in FUZZ_TARGETS for the Makefile):
//
//	FuzzScanLine        the scanner against the JSON rules + encoding/json + Normalize
//	FuzzNDJSONDecode    whole ndjson files: clean errors, stable round trip
//	FuzzNDJSONGzDecode  whole ndjson.gz files under a byte cap
//	FuzzManifest        manifest decode + validate, stable round trip
//	FuzzEncodeValue     the value encoder against encoding/json, the JSON rules and strconv
//	FuzzBatchName       batch folder names against the documented form
//	FuzzInlineDecode    inline batches (EncodeInline): clean errors, stable round trip
//
// Seed corpora are committed under testdata/fuzz/<FuzzName>/.
package spool
