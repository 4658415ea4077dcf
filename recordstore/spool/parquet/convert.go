// Conversions from decoded Parquet values to stored values (see
// recordstore.Values). Each returns the value and its decoded size in bytes,
// and produces exactly what recordstore.NormalizeValue stores for the same
// value.

package parquet

import (
	"encoding/binary"
	"math"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/fb46ecde/records/recordstore"
)

func textValue(b parquet.ByteArray) (any, int64, error) {
	if !utf8.Valid(b) {
		return nil, 0, recordstore.Invalidf("text is not valid UTF-8")
	}
	return string(b), int64(len(b)), nil
}

// jsonValue takes JSON text by the store's JSON rules (CompactJSON: UTF-8,
// no lone surrogate escape, no name twice in one object); the text null is
// a null column (recordstore.JSONNull), as NormalizeValue makes it.
func jsonValue(b parquet.ByteArray) (any, int64, error) {
	s, err := recordstore.CompactJSON(b)
	if err != nil {
		return nil, 0, err
	}
	if recordstore.JSONNull(s) {
		return nil, int64(len(b)), nil
	}
	return s, int64(len(b)), nil
}

func int32Value(v int32) (any, int64, error)  { return int64(v), 8, nil }
func uint32Value(v int32) (any, int64, error) { return int64(uint32(v)), 8, nil }
func int64Value(v int64) (any, int64, error)  { return v, 8, nil }

func uint64Value(v int64) (any, int64, error) {
	if v < 0 {
		return nil, 0, recordstore.Invalidf("%d overflows int64", uint64(v))
	}
	return v, 8, nil
}

func int32Number(v int32) (any, int64, error)  { return float64(v), 8, nil }
func uint32Number(v int32) (any, int64, error) { return float64(uint32(v)), 8, nil }
func int64Number(v int64) (any, int64, error)  { return float64(v), 8, nil }
func uint64Number(v int64) (any, int64, error) { return float64(uint64(v)), 8, nil }
func floatNumber(v float32) (any, int64, error) {
	return finite(float64(v))
}
func doubleNumber(v float64) (any, int64, error) { return finite(v) }

func finite(f float64) (any, int64, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, 0, recordstore.Invalidf("%v is not a finite number", f)
	}
	return f, 8, nil
}

func boolValue(v bool) (any, int64, error) {
	if v {
		return int64(1), 1, nil
	}
	return int64(0), 1, nil
}

// Bounds of the datetimes a column may store (years 0000-9999), as Unix
// seconds.
var (
	minUnix = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxUnix = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() // exclusive
)

func datetimeValue(t time.Time) (any, int64, error) {
	if s := t.Unix(); s < minUnix || s >= maxUnix {
		return nil, 0, recordstore.Invalidf("datetime %v is outside years 0000-9999", t.UTC())
	}
	return recordstore.FormatDatetime(t), int64(len(recordstore.DatetimeLayout)), nil
}

func millisValue(v int64) (any, int64, error) {
	if v < minUnix*1000 || v >= maxUnix*1000 {
		return nil, 0, recordstore.Invalidf("timestamp %d ms is outside years 0000-9999", v)
	}
	return datetimeValue(time.UnixMilli(v))
}

func microsValue(v int64) (any, int64, error) {
	if v < minUnix*1_000_000 || v >= maxUnix*1_000_000 {
		return nil, 0, recordstore.Invalidf("timestamp %d µs is outside years 0000-9999", v)
	}
	return datetimeValue(time.UnixMicro(v))
}

func nanosValue(v int64) (any, int64, error) {
	return datetimeValue(time.Unix(0, v))
}

// julianUnixEpoch is the Julian day number of 1970-01-01.
const julianUnixEpoch = 2_440_588

const nanosPerDay = 86_400 * int64(time.Second)

// int96Value decodes the legacy INT96 timestamp: 8 bytes of nanoseconds
// within the day, then 4 bytes of Julian day number, little-endian.
func int96Value(v parquet.Int96) (any, int64, error) {
	nanos := binary.LittleEndian.Uint64(v[:8])
	day := int64(binary.LittleEndian.Uint32(v[8:]))
	if nanos >= uint64(nanosPerDay) {
		return nil, 0, recordstore.Invalidf("INT96 timestamp has %d nanoseconds in a day", nanos)
	}
	secs := (day - julianUnixEpoch) * 86_400
	if secs < minUnix || secs >= maxUnix {
		return nil, 0, recordstore.Invalidf("INT96 timestamp (Julian day %d) is outside years 0000-9999", day)
	}
	return datetimeValue(time.Unix(secs, int64(nanos)))
}
