// Datetimes: the stored form (fixed-width UTC text with microseconds), the
// RFC 3339 text callers write, and the one calendar check both go by.

package recordstore

import (
	"time"
)

// DatetimeLayout is the stored form of a datetime: fixed-width UTC text with
// microseconds, so that text order is time order.
const DatetimeLayout = "2006-01-02T15:04:05.000000Z"

// FormatDatetime renders t in the stored datetime form (UTC, microseconds).
func FormatDatetime(t time.Time) string {
	secs := t.Unix()
	if secs < firstSecondYear1 || secs >= firstSecondYear10000 {
		return t.UTC().Truncate(time.Microsecond).Format(DatetimeLayout)
	}
	// DatetimeLayout by hand, the date from the day number in one go:
	// time.Format interprets the layout, and Date and Clock each start
	// over from the instant.
	days, sod := secs/86400, secs%86400
	if sod < 0 {
		days, sod = days-1, sod+86400
	}
	year, month, day := civilDate(days)
	var b [len(DatetimeLayout)]byte
	put := func(i, n, digits int) {
		for j := i + digits - 1; j >= i; j-- {
			b[j] = byte('0' + n%10)
			n /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, month, 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, int(sod/3600), 2)
	b[13] = ':'
	put(14, int(sod/60%60), 2)
	b[16] = ':'
	put(17, int(sod%60), 2)
	b[19] = '.'
	put(20, t.Nanosecond()/1000, 6)
	b[26] = 'Z'
	return string(b[:])
}

// Unix seconds of the first instants of years 0, 1 and 10000 (UTC).
const (
	firstSecondYear0     = -62167219200
	firstSecondYear1     = -62135596800
	firstSecondYear10000 = 253402300800
)

// civilDate returns the proleptic Gregorian date of the day days after
// 1970-01-01, for days from year 1 on (days counted in 400-year eras from
// March 1 of year 0, so that the leap day ends a year).
func civilDate(days int64) (year, month, day int) {
	z := days + 719468 // days since 0000-03-01; positive from year 1 on
	era := z / 146097
	doe := z - era*146097                                  // day of the era, 0..146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era, 0..399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the year from March 1, 0..365
	mp := (5*doy + 2) / 153                                // month from March, 0..11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

// MaxFractionDigits is the most fractional-second digits ParseDatetime
// takes (nanoseconds). The store keeps microseconds: digits past the sixth
// are truncated, not rounded.
const MaxFractionDigits = 9

// ParseDatetime parses an RFC 3339 date-time (§5.6) and returns it as UTC
// truncated to microseconds:
//
//	YYYY-MM-DD T hh:mm:ss [.f] (Z | +hh:mm | -hh:mm)
//
// "T" and "Z" may be lowercase (§5.6 NOTE); the date must exist in the
// proleptic Gregorian calendar; hours are 00-23, minutes and seconds 00-59
// (a leap second, :60, is refused: the store cannot keep it); the fraction
// has 1 to MaxFractionDigits digits; an offset's hours are 00-23 and its
// minutes 00-59. The instant, in UTC, must fall in years 0000-9999. It
// refuses anything else with ErrInvalid.
func ParseDatetime(s string) (time.Time, error) {
	t, why := parseRFC3339(s)
	if why != "" {
		return time.Time{}, Invalidf("datetime %s is not RFC 3339: %s", Quote(s), why)
	}
	t = t.Truncate(time.Microsecond)
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, Invalidf("datetime %s is outside years 0000-9999 in UTC", Quote(s))
	}
	return t, nil
}

// parseRFC3339 parses s as ParseDatetime describes and returns the instant
// in UTC, or why s is not one.
func parseRFC3339(s string) (time.Time, string) {
	const minLen = len("2006-01-02T15:04:05")
	if len(s) < minLen {
		return time.Time{}, "too short"
	}
	if !digitsAt(s, 0, 4) || s[4] != '-' || !digitsAt(s, 5, 2) || s[7] != '-' || !digitsAt(s, 8, 2) {
		return time.Time{}, "want a date YYYY-MM-DD"
	}
	year, month, day := num(s, 0, 4), num(s, 5, 2), num(s, 8, 2)
	if !ValidDate(year, month, day) {
		return time.Time{}, "no such date"
	}
	if s[10] != 'T' && s[10] != 't' {
		return time.Time{}, "want 'T' between date and time"
	}
	if !digitsAt(s, 11, 2) || s[13] != ':' || !digitsAt(s, 14, 2) || s[16] != ':' || !digitsAt(s, 17, 2) {
		return time.Time{}, "want a time hh:mm:ss"
	}
	hour, minute, sec := num(s, 11, 2), num(s, 14, 2), num(s, 17, 2)
	switch {
	case hour > 23:
		return time.Time{}, "hour past 23"
	case minute > 59:
		return time.Time{}, "minute past 59"
	case sec == 60:
		return time.Time{}, "leap second :60 is not kept"
	case sec > 59:
		return time.Time{}, "second past 59"
	}
	i, nanos := 19, 0
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n := j - i - 1
		switch {
		case n == 0:
			return time.Time{}, "want digits after '.'"
		case n > MaxFractionDigits:
			return time.Time{}, "more than 9 fractional digits"
		}
		nanos = num(s, i+1, n)
		for ; n < 9; n++ {
			nanos *= 10
		}
		i = j
	}
	var offset int // seconds east of UTC
	switch rest := s[i:]; {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && digitsAt(rest, 1, 2) && rest[3] == ':' && digitsAt(rest, 4, 2):
		oh, om := num(rest, 1, 2), num(rest, 4, 2)
		if oh > 23 || om > 59 {
			return time.Time{}, "offset out of range (hours 00-23, minutes 00-59)"
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, "want 'Z' or an offset +hh:mm / -hh:mm at the end"
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), ""
}

// ParseStoredDatetime parses exactly the stored form (DatetimeLayout, a
// date that exists); ok is false for any other text.
func ParseStoredDatetime(s string) (t time.Time, ok bool) {
	if !IsStoredDatetime(s) {
		return time.Time{}, false
	}
	return time.Date(num(s, 0, 4), time.Month(num(s, 5, 2)), num(s, 8, 2),
		num(s, 11, 2), num(s, 14, 2), num(s, 17, 2), num(s, 20, 6)*1000, time.UTC), true
}

// IsStoredDatetime reports whether s is a datetime in the stored form
// (DatetimeLayout, a date that exists): exactly the strings that
// ParseDatetime parses and FormatDatetime reproduces.
func IsStoredDatetime(s string) bool {
	const pattern = "dddd-dd-ddTdd:dd:dd.ddddddZ"
	if len(s) != len(pattern) {
		return false
	}
	for i := 0; i < len(pattern); i++ {
		if p := pattern[i]; p == 'd' {
			if s[i]-'0' > 9 {
				return false
			}
		} else if s[i] != p {
			return false
		}
	}
	return ValidDate(num(s, 0, 4), num(s, 5, 2), num(s, 8, 2)) &&
		num(s, 11, 2) < 24 && num(s, 14, 2) < 60 && num(s, 17, 2) < 60
}

// ValidDate reports whether year-month-day exists in the proleptic
// Gregorian calendar: the store's one calendar check.
func ValidDate(year, month, day int) bool {
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	days := 31
	switch month {
	case 2:
		days = 28
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			days = 29
		}
	case 4, 6, 9, 11:
		days = 30
	}
	return day <= days
}

// digitsAt reports whether s[i:i+n] are n ASCII digits.
func digitsAt(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// num is the decimal value of the digits s[i:i+n].
func num(s string, i, n int) int {
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		v = v*10 + int(c-'0')
	}
	return v
}
