// Flag value types whose parse errors are usage errors (a fixed set of
// words, an RFC 3339 time), and the wait flags of the writing commands.

package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/spf13/pflag"
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

// waitFlags are --timeout and --no-wait, of every command that writes:
// how long to wait for the owner's outcome of a write that goes through the
// spool, or not to wait at all.
type waitFlags struct {
	noWait  bool
	timeout time.Duration
}

// register adds the flags to f.
func (w *waitFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&w.noWait, "no-wait", false, `through the spool, print {"batch":...,"pending":true} instead of waiting for the owner`)
	f.DurationVar(&w.timeout, "timeout", 0, "how long to wait for the owner's result, like 5s (default: no limit)")
}

// check refuses a negative --timeout, and --timeout with --no-wait.
func (w *waitFlags) check() error {
	if w.timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	if w.noWait && w.timeout > 0 {
		return usagef("--timeout and --no-wait cannot be used together")
	}
	return nil
}

// bound is ctx bounded by --timeout when it is set, else ctx itself.
func (w *waitFlags) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.timeout > 0 {
		return context.WithTimeout(ctx, w.timeout)
	}
	return ctx, func() {}
}

// options are the library's write options for the flags.
func (w *waitFlags) options() owner.WriteOptions {
	return owner.WriteOptions{NoWait: w.noWait}
}
