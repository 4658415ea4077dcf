// Package configkeys is the one key table behind the drakkar packages'
// configurations (recorder, archive, cache, registry and the worker's own
// keys): each key knows how to set its field from --set text, read it back,
// and check it, and the table answers Set, Get, Validate and the list of
// keys the same way for all.
//
// Keys are built with the typed constructors Bool, Int, Duration and
// String, so that one key text means one value whichever package reads
// it: bools, integers and durations ignore spaces around the text (strings
// keep theirs), bools are exactly true or false, and a duration is a
// decimal number of the key's unit rounded to the nearest nanosecond
// (rotation_interval_hours 2.3 is 2h18m0s everywhere).
package configkeys

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Key is one configuration key of a config type C.
type Key[C any] struct {
	// Name is the spec's dotted key name.
	Name string
	// Set sets the field from its text; it may refuse text that does not
	// parse, leaving c unchanged. Range rules belong in Check.
	Set func(c *C, v string) error
	// Get returns the field in the text form Set accepts.
	Get func(c C) string
	// Check judges the value; nil accepts any.
	Check func(c C) error
}

// Table is the keys of a config type, in a fixed order.
type Table[C any] []Key[C]

// Names lists the keys, in order.
func (t Table[C]) Names() []string {
	out := make([]string, len(t))
	for i, k := range t {
		out[i] = k.Name
	}
	return out
}

// Has reports whether key is in the table.
func (t Table[C]) Has(key string) bool {
	_, ok := t.find(key)
	return ok
}

func (t Table[C]) find(key string) (Key[C], bool) {
	for _, k := range t {
		if k.Name == key {
			return k, true
		}
	}
	return Key[C]{}, false
}

// Set sets key from value. An unknown key or an unparsable value is an
// error wrapping sentinel that names the key ("ui.enabled: must be true or
// false, got \"yes\""; "unknown key \"x\""), and c is unchanged.
func (t Table[C]) Set(c *C, key, value string, sentinel error) error {
	k, ok := t.find(key)
	if !ok {
		return recordstore.Errorf(sentinel, "unknown key %s", recordstore.Quote(key))
	}
	if err := k.Set(c, value); err != nil {
		return recordstore.Errorf(sentinel, "%s: %s", key, err.Error())
	}
	return nil
}

// Get returns key's value in the text form Set accepts, and false for an
// unknown key.
func (t Table[C]) Get(c C, key string) (string, bool) {
	k, ok := t.find(key)
	if !ok {
		return "", false
	}
	return k.Get(c), true
}

// Validate checks every key, in order, and returns an error wrapping
// sentinel for the first bad one, naming it ("cache.max_memory_entries:
// must be at least 0, got -1").
func (t Table[C]) Validate(c C, sentinel error) error {
	for _, k := range t {
		if k.Check == nil {
			continue
		}
		if err := k.Check(c); err != nil {
			return recordstore.Errorf(sentinel, "%s: %s", k.Name, err.Error())
		}
	}
	return nil
}

// ParseBool reads a bool key's text: "true" or "false", spaces around
// them ignored. Anything else is an error quoting v.
func ParseBool(v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("must be true or false, got " + recordstore.Quote(v))
}

// ParseInt reads an integer key's text: a decimal integer, spaces around
// it ignored. Anything else is an error quoting v.
func ParseInt(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("must be an integer, got " + recordstore.Quote(v))
	}
	return n, nil
}

// ParseDuration reads a duration key's text: a decimal number of unit
// (fractions and exponents allowed, spaces around it ignored), rounded to
// the nearest nanosecond, halves away from zero. Text that is not a finite
// number, or a duration beyond time.Duration's range, is an error quoting
// v.
func ParseDuration(v string, unit time.Duration) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	d := math.Round(f * float64(unit))
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(d) >= math.MaxInt64 {
		return 0, errors.New("must be a number, got " + recordstore.Quote(v))
	}
	return time.Duration(d), nil
}

// FormatDuration is d in unit as the shortest decimal ParseDuration reads
// back.
func FormatDuration(d, unit time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(unit), 'g', -1, 64)
}

// String is a text key; the text is stored as given. check (nil: any
// text) judges the value.
func String[C any](name string, field func(*C) *string, check func(string) error) Key[C] {
	k := Key[C]{
		Name: name,
		Set:  func(c *C, v string) error { *field(c) = v; return nil },
		Get:  func(c C) string { return *field(&c) },
	}
	if check != nil {
		k.Check = func(c C) error { return check(*field(&c)) }
	}
	return k
}

// Bool is a true/false key (see ParseBool).
func Bool[C any](name string, field func(*C) *bool) Key[C] {
	return Key[C]{
		Name: name,
		Set: func(c *C, v string) error {
			b, err := ParseBool(v)
			if err != nil {
				return err
			}
			*field(c) = b
			return nil
		},
		Get: func(c C) string { return strconv.FormatBool(*field(&c)) },
	}
}

// Int is an integer key (see ParseInt) whose value must be at least min.
func Int[C any](name string, min int, field func(*C) *int) Key[C] {
	return Key[C]{
		Name: name,
		Set: func(c *C, v string) error {
			n, err := ParseInt(v)
			if err != nil {
				return err
			}
			*field(c) = n
			return nil
		},
		Get: func(c C) string { return strconv.Itoa(*field(&c)) },
		Check: func(c C) error {
			if n := *field(&c); n < min {
				return errors.New("must be at least " + strconv.Itoa(min) + ", got " + strconv.Itoa(n))
			}
			return nil
		},
	}
}

// Duration is a key holding a number of unit (see ParseDuration). check
// judges the value with the whole configuration at hand (Positive,
// NotNegative, or a rule of the package's own); nil accepts any.
func Duration[C any](name string, unit time.Duration, field func(*C) *time.Duration, check func(c C, d time.Duration) error) Key[C] {
	k := Key[C]{
		Name: name,
		Set: func(c *C, v string) error {
			d, err := ParseDuration(v, unit)
			if err != nil {
				return err
			}
			*field(c) = d
			return nil
		},
		Get: func(c C) string { return FormatDuration(*field(&c), unit) },
	}
	if check != nil {
		k.Check = func(c C) error { return check(c, *field(&c)) }
	}
	return k
}

// Positive is a Duration check for an interval: more than 0.
func Positive[C any](_ C, d time.Duration) error {
	if d <= 0 {
		return errors.New("must be more than 0, got " + d.String())
	}
	return nil
}

// NotNegative is a Duration check for a threshold or a retention where 0
// means off.
func NotNegative[C any](_ C, d time.Duration) error {
	if d < 0 {
		return errors.New("must not be negative, got " + d.String())
	}
	return nil
}
