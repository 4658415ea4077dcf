// The row spill's decoder against arbitrary bytes.

package recordstore

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"testing"
)

// FuzzRowSpillDecode decodes arbitrary bytes as rows of width values: it
// must not panic, must fail with errSpillCorrupt only, and every row it
// decodes must encode and decode again to the same values.
func FuzzRowSpillDecode(f *testing.F) {
	seed := func(rows ...Values) []byte {
		var b []byte
		for _, r := range rows {
			for _, v := range r {
				b, _ = appendStoredValue(b, v)
			}
		}
		return b
	}
	f.Add(seed(Values{int64(1), "user-1", 2.5, int64(1)}, Values{nil, "", math.Inf(1), int64(-7)}), uint8(4))
	f.Add(seed(Values{"x"}), uint8(1))
	f.Add([]byte{tagString, 0xff, 0xff, 0xff, 0xff, 0x0f}, uint8(1))
	f.Add([]byte{tagInt, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uint8(1))
	f.Add([]byte{tagFloat, 1, 2, 3}, uint8(2))
	f.Add([]byte{9}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, width uint8) {
		w := int(width%8) + 1
		r := bufio.NewReader(bytes.NewReader(data))
		var buf []byte
		for {
			if _, err := r.Peek(1); err != nil {
				return // every byte read
			}
			vals, err := decodeStoredRow(r, w, int64(len(data)), &buf)
			if err != nil {
				if !errors.Is(err, errSpillCorrupt) {
					t.Fatalf("error %v is not errSpillCorrupt", err)
				}
				return
			}
			var enc []byte
			for _, v := range vals {
				var ok bool
				if enc, ok = appendStoredValue(enc, v); !ok {
					t.Fatalf("decoded %T, not a stored value", v)
				}
			}
			again, err := decodeStoredRow(bufio.NewReader(bytes.NewReader(enc)), w, int64(len(enc)), &buf)
			if err != nil {
				t.Fatalf("re-encoded row %v: %v", vals, err)
			}
			for i := range vals {
				if !sameStored(vals[i], again[i]) {
					t.Fatalf("value %d: %#v, then %#v", i, vals[i], again[i])
				}
			}
		}
	})
}

// sameStored reports whether two stored values are the same, floats by
// their bits.
func sameStored(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}
