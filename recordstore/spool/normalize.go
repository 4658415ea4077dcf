// Normalize and Remap: the values a spooled row carries are exactly the
// values a direct append stores.

package spool

import (
	"fmt"

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
// Columns of to that from lacks are null; a column of from that to lacks,
// or that has another type, is an ErrSchemaConflict error. The result is
// checked for to's required and key columns (ErrInvalid).
func Remap(from, to *recordstore.Kind, vals recordstore.Values) (recordstore.Values, error) {
	if len(vals) != len(from.Columns) {
		return nil, recordstore.Invalidf("kind %s: %d values for %d columns", from.Name, len(vals), len(from.Columns))
	}
	out := make(recordstore.Values, len(to.Columns))
	for i, c := range from.Columns {
		j := to.ColumnIndex(c.Name)
		if j < 0 || to.Columns[j].Type != c.Type {
			return nil, schemaConflict(from, to, c.Name)
		}
		out[j] = vals[i]
	}
	if err := to.CheckRequired(out); err != nil {
		return nil, err
	}
	return out, nil
}

func schemaConflict(from, to *recordstore.Kind, col string) error {
	return fmt.Errorf("%w: column %s of kind %s does not match kind %s", recordstore.ErrSchemaConflict, col, from.Name, to.Name)
}
