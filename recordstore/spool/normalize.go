// Normalize and Remap: the values a spooled row carries are exactly the
// values a direct append stores.

package spool

import (
	"github.com/fb46ecde/records/recordstore"
)

// Normalize turns a caller's row into the values the SQLite backend stores
// for kind: bool as int64 0/1, datetime as recordstore.DatetimeLayout text,
// json as compact JSON text, integers exact. It is recordstore's
// Kind.Normalize, named here so producers see that a row travelling through
// the spool is stored byte-identical to a direct append. Errors wrap
// recordstore.ErrInvalid.
func Normalize(kind *recordstore.Kind, row recordstore.Row) (recordstore.Values, error) {
	return kind.Normalize(row)
}

// Remap moves values of kind from (a manifest's schema) into the column
// order of kind to (the stored declaration, after recordstore.Reconcile).
// It is recordstore.Remap: columns of to that from lacks are null; a column
// of from that to lacks, or that has another type, is an ErrSchemaConflict
// error; the row is checked for to's required and key columns (ErrInvalid).
func Remap(from, to *recordstore.Kind, vals recordstore.Values) (recordstore.Values, error) {
	return recordstore.Remap(from, to, vals)
}
