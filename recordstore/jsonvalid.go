// The check of JSON text: the store's one JSON grammar
// (recordstore/internal/jsonx), stricter than encoding/json's Valid so
// that a stored json value means the same to every reader.

package recordstore

import "github.com/fb46ecde/records/recordstore/internal/jsonx"

// CheckJSON returns nil when b is one JSON value (white space around it
// allowed), else an ErrInvalid error saying where and why it is not. Beyond
// RFC 8259's grammar it refuses strings that are not UTF-8, \u escapes of a
// lone UTF-16 surrogate ("\ud800"), and a name repeated in one object at
// any depth ({"a":1,"a":2}; names compared after unescaping).
func CheckJSON(b []byte) error {
	if err := jsonx.Check(b); err != nil {
		return Invalidf("malformed JSON value: %v", err)
	}
	return nil
}

// validJSON reports whether CheckJSON accepts b.
func validJSON(b []byte) bool { return jsonx.Valid(b) }
