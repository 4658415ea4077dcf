// Package parquet is the Parquet codec of the spool: importing it for its
// side effect registers the format "parquet" (extension ".parquet") with
// spool.Register, so batches may carry Parquet data files.
//
//	import _ "github.com/fb46ecde/records/recordstore/spool/parquet"
//
// # Files written
//
// An encoder writes one flat Parquet file per data file: one leaf column per
// kind column, in kind order, under a root named after the kind. Column types:
//
//	kind type   physical     logical / annotation
//	string      BYTE_ARRAY   STRING (UTF8)
//	integer     INT64        (none: signed 64-bit)
//	number      DOUBLE       (none)
//	bool        BOOLEAN      (none)
//	datetime    INT64        TIMESTAMP(isAdjustedToUTC=true, MICROS)
//	json        BYTE_ARRAY   STRING (UTF8), compact JSON text
//
// Required and key columns are REQUIRED, every other column OPTIONAL. Rows
// are cut into row groups of at most RowGroupRows rows or about
// RowGroupBytes of raw values, whichever comes first; pages are
// zstd-compressed. The files are ordinary Parquet that DuckDB, pyarrow and
// Spark read with the types above.
//
// # Files read
//
// A decoder maps the file's columns to the kind's columns by exact name.
// Besides what the encoder writes it accepts INT32 (and 8/16/32-bit or
// unsigned integer annotations that fit int64) for integer, FLOAT, DOUBLE,
// INT32 and INT64 for number, TIMESTAMP in MILLIS, MICROS or NANOS (adjusted
// to UTC or not; a local timestamp is taken as UTC) and INT96 for datetime,
// BYTE_ARRAY annotated STRING, ENUM or JSON (or not annotated, when the bytes
// are UTF-8) for string and json, and REQUIRED or OPTIONAL repetition for any
// column. Integers never pass through float64. A kind column absent from the
// file reads as null (an error when the column is required or part of the
// key); a file column the kind does not declare, a nested or repeated
// column, or a column of another type is an error naming the column.
// Decoded rows are exactly what recordstore.Kind.Normalize stores for the
// same row.
//
// # Hostile files
//
// The decoder treats its input as untrusted. Before it lets arrow-go parse
// anything it checks the magic bytes, the footer length against the file
// size, and walks the Thrift footer itself, refusing lengths and element
// counts that the footer's own bytes cannot hold and footers whose decoded
// form would be unreasonably large. It checks row counts, column chunk
// ranges and declared sizes against the file and against spool.Limits, and
// walks each row group's page headers (sizes, dictionary and value counts)
// before decoding its pages. Pages are read through a bounded buffer and
// decoded in small batches, one row group at a time; arrow-go's allocator is
// capped so that no single buffer exceeds the page cap (DefaultPageLimit, or
// Limits.MaxBytes when smaller). arrow-go panics on some malformed input
// instead of returning an error: such a panic is recovered at the codec
// boundary (NewDecoder and Next) and returned as ErrCorrupt, or as
// spool.ErrTooLarge when it was the allocator cap that refused.
//
// Limits: Limits.MaxRows is checked against the row count the footer
// declares, before any page is read, and again while rows are returned;
// Limits.MaxBytes is checked against the file size and the column chunks'
// declared uncompressed sizes before reading, against each page's declared
// size, and against the decoded size of the values while reading.
//
// # Concurrency
//
// An Encoder or Decoder is used by one goroutine at a time. The codec value
// itself is stateless and safe for concurrent use.
package parquet
