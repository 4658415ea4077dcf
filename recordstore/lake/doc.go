// Package lake exports a stream's rows as append-only Parquet files with a
// manifest, to a folder or to S3-compatible object storage, for analytical
// engines (DuckDB, Spark, Trino) that read a "data lake" layout.
//
// Layout under the destination, one folder per stream in Hive partition
// style so that a glob read gets the stream and generation as columns:
//
//	stream=<stream>/_manifest.json
//	stream=<stream>/generation=<G>/part-<from>-<to>.parquet
//
// <from> and <to> are the seq range the file covers, zero-padded to 20
// digits so that names sort in seq order; every file has an "_seq" int64
// column first, then the kind's columns. The stream name is path-escaped.
// With Options.PartitionBy, a datetime column splits each range's rows
// into one file per value, one folder down:
// generation=<G>/<column>_<unit>=<value>/part-<from>-<to>.parquet.
//
// Export is incremental: the manifest records the last seq covered, and a
// run exports only rows after it, in files of at most Options.RowsPerFile
// rows. Each file is written whole (a folder: temp file, fsync, rename; S3:
// one PUT) before the manifest names it, and the manifest is replaced after
// each file, so a run that dies leaves every file the manifest names whole
// and at most one file the manifest does not name yet; the next run removes
// such leftovers before it writes. Two exports of one stream at once are
// refused (a folder: a lock file; S3: conditional writes of the manifest),
// never interleaved.
package lake
