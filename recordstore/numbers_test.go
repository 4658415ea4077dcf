// ParseIntegerText against math/big: the exact value of a number literal,
// an int64 exactly when big.Rat says it is an integer in range.

package recordstore_test

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"testing"

	"github.com/fb46ecde/records/recordstore"
)

// jsonNumber is RFC 8259's number, with the exponent's digits captured.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?([0-9]+))?$`)

func FuzzParseIntegerText(f *testing.F) {
	for _, s := range []string{"0", "-0", "1e-400", "1e3", "2.0", "1.5", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "9.223372036854775807e18", "1e19", "100e-2", "120e-1",
		"0e99999999999999999999", "1e99999999999999999999", "1.5e-9223372036854775808", "01", "1e", "-"} {
		f.Add(s)
	}
	lo, hi := big.NewRat(math.MinInt64, 1), new(big.Rat).SetInt64(math.MaxInt64)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := recordstore.ParseIntegerText(s)
		m := jsonNumber.FindStringSubmatch(s)
		if m == nil {
			return // not JSON: what json.Number may hold besides is not pinned
		}
		if e, _ := strconv.Atoi(m[4]); len(m[4]) > 4 || e > 2000 {
			return // big.Rat would take its time; the unit specs cover these
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat refuses JSON number %q", s)
		}
		want := r.IsInt() && r.Cmp(lo) >= 0 && r.Cmp(hi) <= 0
		if want != (err == nil) {
			t.Fatalf("ParseIntegerText(%q) error %v; an int64: %v", s, err, want)
		}
		if want && got.(int64) != r.Num().Int64() {
			t.Fatalf("ParseIntegerText(%q) = %v, want %v", s, got, r.Num())
		}
	})
}
