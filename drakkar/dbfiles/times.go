// The three time forms of the Drakkar files (notes §3), all derived from
// one clock reading truncated to whole microseconds.

package dbfiles

import (
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Layouts of the text time forms.
const (
	// DTLayout is the dt / created_at_dt / updated_at_dt column form:
	// UTC, milliseconds truncated.
	DTLayout = "2006-01-02 15:04:05.000"
	// TimeLayout is the canonical datetime of JSON and meta files: UTC,
	// six fractional digits, Z.
	TimeLayout = "2006-01-02T15:04:05.000000Z"
)

// Micro is t in UTC truncated to a whole microsecond: the one reading every
// other form derives from. A microsecond value survives the float64 round
// trip of ts, so Python's dt derived from ts agrees with DT.
func Micro(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// TS is the REAL Unix seconds of a ts column: the microsecond value of t
// divided by 10⁶ (the float nearest to it).
func TS(t time.Time) float64 {
	return float64(Micro(t).UnixMicro()) / 1e6
}

// DT is the dt column form of t: YYYY-MM-DD HH:MM:SS.mmm, UTC, the
// milliseconds truncated.
func DT(t time.Time) string { return Micro(t).Format(DTLayout) }

// FormatTime is the canonical datetime of t: YYYY-MM-DDTHH:MM:SS.ffffffZ,
// UTC, microseconds truncated.
func FormatTime(t time.Time) string { return Micro(t).Format(TimeLayout) }

// ParseTime parses exactly the FormatTime shape (27 characters, six
// fractional digits, Z) and returns the UTC time; anything else is
// ErrBadTime.
func ParseTime(s string) (time.Time, error) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, recordstore.Errorf(ErrBadTime, "%q", s)
	}
	t, ok := parseExact(TimeLayout, s)
	if !ok {
		return time.Time{}, recordstore.Errorf(ErrBadTime, "%q", s)
	}
	return t, nil
}
