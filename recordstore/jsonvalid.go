// The check of JSON column values: one JSON value, as json.Valid accepts
// it, several times faster on the short values JSON columns hold
// (recordstore/internal/jsonx; FuzzValidJSON compares it with json.Valid).

package recordstore

import "github.com/fb46ecde/records/recordstore/internal/jsonx"

// validJSON reports whether b is one JSON value, with optional white space
// around it.
func validJSON(b []byte) bool { return jsonx.Valid(b) }
