// Config: the archive pass's keys of the worker configuration
// (history.archive.*, history.merged_retention_days), their defaults,
// --set parsing and validation.

package archive

import (
	"errors"
	"time"

	"github.com/fb46ecde/records/drakkar/internal/configkeys"
)

// Day is the unit of the *_days keys.
const Day = 24 * time.Hour

// Config is what the archive pass reads from the worker configuration.
// Start from DefaultConfig. Durations are time.Duration here; their keys
// take numbers with fractions in the key's unit (window_hours: 0.5 is 30
// minutes).
type Config struct {
	// Enabled is history.archive.enabled (default true).
	Enabled bool
	// Window is history.archive.window_hours (default 24 h): the width of
	// a window, a whole number of minutes.
	Window time.Duration
	// DueAfter is history.archive.due_after_hours (default 48 h): a window
	// is archived this long after it ends.
	DueAfter time.Duration
	// Retention is history.archive.retention_days (default 30 days): an
	// archive is deleted once its window ended this long ago; 0 keeps
	// archives forever.
	Retention time.Duration
	// LockStale is history.archive.lock_stale_seconds (default 7200 s): a
	// lock or work file older than this belongs to a dead archiver.
	LockStale time.Duration
	// MergedRetention is history.merged_retention_days (default 32 days):
	// merge results in merged/ older than this are deleted; 0 keeps them.
	MergedRetention time.Duration
	// RotationInterval is ui.recorder.rotation_interval_hours (default
	// 1 h), which Window and DueAfter must not undercut.
	RotationInterval time.Duration
}

// DefaultConfig returns the spec's defaults.
func DefaultConfig() Config {
	return Config{
		Enabled:          true,
		Window:           24 * time.Hour,
		DueAfter:         48 * time.Hour,
		Retention:        30 * Day,
		LockStale:        7200 * time.Second,
		MergedRetention:  32 * Day,
		RotationInterval: time.Hour,
	}
}

// Keys lists every key Set accepts, in a fixed order.
func Keys() []string { return configKeys.Names() }

// Set sets one key from its text, as given by --set key=value: bools as
// true/false, durations as numbers (fractions allowed) in the key's unit,
// rounded to the nearest nanosecond as every drakkar configuration reads
// them; spaces around the text are ignored. An unknown key or an
// unparsable value is an ErrConfig naming the key, and c is unchanged.
// Range rules are checked by Validate.
func (c *Config) Set(key, value string) error {
	return configKeys.Set(c, key, value, ErrConfig)
}

// Get returns the value of a key in the text form Set accepts, and false
// for an unknown key.
func (c Config) Get(key string) (string, bool) {
	return configKeys.Get(c, key)
}

// Validate returns one ErrConfig for the first bad key, naming it:
// "history.archive.window_hours: must be at least the rotation interval
// (1h0m0s), got 30m0s". The checks: every duration positive (retentions
// may be 0), the window a whole number of minutes, window and due delay
// at least the rotation interval, and a retention that covers the due
// delay plus the window.
func (c Config) Validate() error {
	return configKeys.Validate(c, ErrConfig)
}

// Config's keys, in Keys order; every parse rule is configkeys'.
var configKeys = configkeys.Table[Config]{
	configkeys.Bool("history.archive.enabled", func(c *Config) *bool { return &c.Enabled }),
	configkeys.Duration("history.archive.window_hours", time.Hour, func(c *Config) *time.Duration { return &c.Window }, checkWindow),
	configkeys.Duration("history.archive.due_after_hours", time.Hour, func(c *Config) *time.Duration { return &c.DueAfter }, checkDue),
	configkeys.Duration("history.archive.retention_days", Day, func(c *Config) *time.Duration { return &c.Retention }, checkRetention),
	configkeys.Duration("history.archive.lock_stale_seconds", time.Second, func(c *Config) *time.Duration { return &c.LockStale }, configkeys.Positive),
	configkeys.Duration("history.merged_retention_days", Day, func(c *Config) *time.Duration { return &c.MergedRetention }, configkeys.NotNegative),
	configkeys.Duration("ui.recorder.rotation_interval_hours", time.Hour, func(c *Config) *time.Duration { return &c.RotationInterval }, configkeys.Positive),
}

// atLeastRotation refuses a duration shorter than the rotation interval:
// a window or due delay shorter than a file's life would archive a
// window whose files are still being written.
func atLeastRotation(c Config, d time.Duration) error {
	if err := configkeys.Positive(c, d); err != nil {
		return err
	}
	if d < c.RotationInterval {
		return errors.New("must be at least the rotation interval (" + c.RotationInterval.String() + "), got " + d.String())
	}
	return nil
}

// checkWindow: archive names have minute resolution, so a window must be
// a whole number of minutes.
func checkWindow(c Config, d time.Duration) error {
	if err := atLeastRotation(c, d); err != nil {
		return err
	}
	if d%time.Minute != 0 {
		return errors.New("must be a whole number of minutes (archive names have minute resolution), got " + d.String())
	}
	return nil
}

func checkDue(c Config, d time.Duration) error { return atLeastRotation(c, d) }

// checkRetention: an archive must outlive the time its window takes to
// become due, or it could be expired before it is written.
func checkRetention(c Config, d time.Duration) error {
	if err := configkeys.NotNegative(c, d); err != nil || d == 0 {
		return err
	}
	if d < c.DueAfter+c.Window {
		return errors.New("must cover due_after_hours + window_hours (" + (c.DueAfter + c.Window).String() + "), got " + d.String())
	}
	return nil
}
