package recordresults

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzJSONFloat checks the NDJSON export's float64 text against
// encoding/json's (what Record.MarshalJSON writes), byte for byte, and
// that a value encoding/json refuses (NaN, ±Inf) is refused too.
func FuzzJSONFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1.5, 20.5, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 123456789e13,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -5e-324, 0.1, 1.0 / 3, math.Inf(1), math.NaN()} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		want, werr := json.Marshal(v)
		got, gerr := appendJSONValue([]byte("x"), v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%v: encoding/json error %v, ours %v", v, werr, gerr)
		}
		if werr == nil && string(got) != "x"+string(want) {
			t.Fatalf("%v: ours %s, encoding/json %s", v, got[1:], want)
		}
	})
}
