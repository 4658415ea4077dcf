// The row spill's decoder against arbitrary bytes.

package recordstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// spillRows encodes rows as RowSpill writes them: each row's length, then
// its values.
func spillRows(rows ...Values) []byte {
	var out []byte
	for _, r := range rows {
		var enc []byte
		for _, v := range r {
			enc, _ = appendStoredValue(enc, v)
		}
		out = append(binary.AppendUvarint(out, uint64(len(enc))), enc...)
	}
	return out
}

// spillSource reads data as a spill source of rows of width values, with
// a read buffer of bufSize bytes.
func spillSource(data []byte, width, bufSize int) *rowSpillSource {
	return &rowSpillSource{r: bufio.NewReaderSize(bytes.NewReader(data), bufSize), n: len(data) + 1, width: width, size: int64(len(data))}
}

// FuzzRowSpillDecode reads arbitrary bytes as a spill's rows of width
// values, through a small and a large read buffer (a row longer than the
// buffer is read another way): it must not panic, must fail with
// errSpillCorrupt only, and every row it decodes must encode and decode
// again to the same values.
func FuzzRowSpillDecode(f *testing.F) {
	f.Add(spillRows(Values{int64(1), "user-1", 2.5, int64(1)}, Values{nil, "", math.Inf(1), int64(-7)}), uint8(3), false)
	f.Add(spillRows(Values{strings.Repeat("x", 40)}, Values{"y"}), uint8(0), true)
	f.Add(spillRows(Values{"x"}), uint8(0), false)
	f.Add([]byte{6, tagString, 0xff, 0xff, 0xff, 0xff, 0x0f}, uint8(0), false)
	f.Add([]byte{12, tagInt, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uint8(0), true)
	f.Add([]byte{4, tagFloat, 1, 2, 3}, uint8(1), false)
	f.Add([]byte{1, 9}, uint8(0), false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, width uint8, small bool) {
		w := int(width%8) + 1
		bufSize := 4096
		if small {
			bufSize = 16 // bufio's least: rows past it take the streaming path
		}
		src := spillSource(data, w, bufSize)
		for {
			vals, err := src.Next()
			if err != nil {
				if !errors.Is(err, errSpillCorrupt) {
					t.Fatalf("error %v is not errSpillCorrupt", err)
				}
				return
			}
			if len(vals) != w {
				t.Fatalf("a row of %d values, want %d", len(vals), w)
			}
			enc := spillRows(vals)
			again, err := spillSource(enc, w, bufSize).Next()
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
