// Key identity: when two rows of a kind have the same key. Every check for
// a key repeated among rows (a direct append, Publish, the bulk Writer)
// goes by Kind.AppendRowKey, so that a batch one path accepts is not
// refused by another for its keys.

package recordstore

import (
	"encoding/binary"
	"math"
)

// AppendRowKey appends to dst the identity of the key of vals, a row
// normalized for k (see Values), and returns the extended slice. Two rows
// have the same key exactly when their identities are equal bytes, which
// is when SQLite's unique index on the key columns holds them equal: a
// number is compared by value, so 0 and -0 are one key, and so are a whole
// float64 and the int64 of the same value. A kind without a key appends
// nothing. The identity is for comparing within one process; it is not a
// stable format.
func (k *Kind) AppendRowKey(dst []byte, vals Values) []byte {
	for _, name := range k.Key {
		i := k.ColumnIndex(name)
		if i < 0 || i >= len(vals) {
			dst = append(dst, 'n')
			continue
		}
		dst = appendKeyPart(dst, vals[i])
	}
	return dst
}

// appendKeyPart encodes one stored key value unambiguously: a type byte,
// then a fixed-width number or a length-prefixed string.
func appendKeyPart(dst []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		dst = append(dst, 's')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case []byte: // text as a driver may return it
		dst = append(dst, 's')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case int64:
		return binary.BigEndian.AppendUint64(append(dst, 'i'), uint64(x))
	case float64:
		// -2^63 <= x < 2^63 converts exactly; -0 becomes 0.
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return binary.BigEndian.AppendUint64(append(dst, 'i'), uint64(int64(x)))
		}
		return binary.BigEndian.AppendUint64(append(dst, 'f'), math.Float64bits(x))
	case nil:
		return append(dst, 'n')
	}
	// No other type is a stored value (Normalize makes none).
	return append(dst, '?')
}
