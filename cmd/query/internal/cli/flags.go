// Flag value types whose parse errors are usage errors: a fixed set of
// words, and an RFC 3339 time.

package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// enumValue is a flag that accepts one of a fixed set of words.
type enumValue struct {
	value   string
	allowed []string
}

func newEnum(def string, allowed ...string) enumValue {
	return enumValue{value: def, allowed: allowed}
}

func (e *enumValue) String() string { return e.value }
func (e *enumValue) Type() string   { return "string" }

func (e *enumValue) Set(s string) error {
	if !slices.Contains(e.allowed, s) {
		return fmt.Errorf("want one of %s", strings.Join(e.allowed, ", "))
	}
	e.value = s
	return nil
}

// timeValue is a flag holding an RFC 3339 time.
type timeValue struct{ t time.Time }

func (v *timeValue) Type() string { return "RFC3339" }

func (v *timeValue) String() string {
	if v.t.IsZero() {
		return ""
	}
	return v.t.Format(time.RFC3339Nano)
}

func (v *timeValue) Set(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time like 2024-05-01T12:00:00Z")
	}
	v.t = t
	return nil
}
