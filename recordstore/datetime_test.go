// ParseDatetime against a reference written from RFC 3339 §5.6 the slow
// way: a regular expression for the grammar, then time.Parse for the
// calendar.

package recordstore_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// rfc3339 is §5.6's date-time with at most nine fractional digits.
var rfc3339 = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$`)

// referenceDatetime parses s the slow way; ok is false when the store
// refuses it.
func referenceDatetime(s string) (time.Time, bool) {
	m := rfc3339.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	if n(4) > 23 || n(5) > 59 || n(6) > 59 || m[9] != "" && (n(9) > 23 || n(10) > 59) {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
	if err != nil {
		return time.Time{}, false // no such date
	}
	t = t.UTC().Truncate(time.Microsecond)
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

func FuzzParseDatetime(f *testing.F) {
	for _, s := range []string{"2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123456789z", "2024-01-02T03:04:05+24:00",
		"2024-01-02T03:04:05.1234567891Z", "2016-12-31T23:59:60Z", "2023-02-29T00:00:00Z", "0000-01-01T00:00:00+00:01",
		"9999-12-31T23:59:59.999999-00:00", "2024-01-02 03:04:05Z", "2024-01-02T03:04:05.000000Z", "2024-01-02T03:04:05.Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := recordstore.ParseDatetime(s)
		want, ok := referenceDatetime(s)
		if ok != (err == nil) {
			t.Fatalf("ParseDatetime(%q) error %v, the reference accepts: %v", s, err, ok)
		}
		if ok && !got.Equal(want) {
			t.Fatalf("ParseDatetime(%q) = %v, the reference gives %v", s, got, want)
		}
		stored := ok && recordstore.FormatDatetime(got) == s
		if recordstore.IsStoredDatetime(s) != stored {
			t.Fatalf("IsStoredDatetime(%q) = %v, parsed and formatted back: %v", s, !stored, stored)
		}
	})
}
