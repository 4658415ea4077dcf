// Sentinel errors of the Parquet codec. All three wrap recordstore.ErrInvalid;
// limit errors are spool.ErrTooManyRows and spool.ErrTooLarge.

package parquet

import "github.com/fb46ecde/records/recordstore"

// Sentinels.
var (
	// ErrCorrupt is returned for bytes that are not a well-formed Parquet
	// file: bad magic, a footer or page that does not fit the file, counts
	// that contradict each other, or a page arrow-go cannot decode.
	ErrCorrupt = recordstore.Invalidf("corrupt parquet file")
	// ErrSchemaMismatch is returned when a well-formed file does not fit the
	// kind: a column the kind does not declare, a column of the wrong type,
	// a nested or repeated column, a required or key column absent from the
	// file. (A null in such a column is found while reading and reported by
	// recordstore.Kind.CheckRequired, an ErrInvalid error.)
	ErrSchemaMismatch = recordstore.Invalidf("parquet schema does not fit the kind")
	// ErrUnsupported is returned for Parquet features the codec does not
	// read: encrypted files.
	ErrUnsupported = recordstore.Invalidf("unsupported parquet feature")
)

func corruptf(format string, args ...any) error {
	return recordstore.Errorf(ErrCorrupt, format, args...)
}

func mismatchf(format string, args ...any) error {
	return recordstore.Errorf(ErrSchemaMismatch, format, args...)
}
