// Package interop checks that what records writes for other programs is
// read by them as the specs say: spool Parquet files in DuckDB, through
// DuckDB's own engine (linked through cgo). It is a module of its own so
// that the library's module does not depend on DuckDB.
package interop
