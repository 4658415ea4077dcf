// Config: the registry's keys of the worker configuration
// (fleet.registry.*), their defaults, --set parsing and validation.

package registry

import (
	"time"

	"github.com/fb46ecde/records/drakkar/internal/configkeys"
)

// Config is the registry's part of a worker's configuration (the
// filesystem provider: cards in <shared.dir>/fleet/workers). Start from
// DefaultConfig.
type Config struct {
	// Heartbeat is fleet.registry.heartbeat_seconds (default 10).
	Heartbeat time.Duration
	// Refresh is fleet.registry.refresh_seconds (default 10).
	Refresh time.Duration
	// OfflineAfter is fleet.registry.offline_after_seconds (default 30).
	OfflineAfter time.Duration
}

// DefaultConfig returns the spec's defaults.
func DefaultConfig() Config {
	return Config{Heartbeat: DefaultHeartbeat, Refresh: DefaultRefresh, OfflineAfter: DefaultOfflineAfter}
}

// Keys lists the keys Set accepts, in a fixed order.
func Keys() []string { return configKeys.Names() }

// Set sets one key from its text, as given by --set key=value: a number
// of seconds (fractions allowed) rounded to the nearest nanosecond,
// spaces around it ignored, as every drakkar configuration reads
// durations. An unknown key or an unparsable value is an ErrConfig naming
// the key, and c is unchanged. Ranges are checked by Validate.
func (c *Config) Set(key, value string) error {
	return configKeys.Set(c, key, value, ErrConfig)
}

// Get returns the value of a key in the text form Set accepts, and false
// for an unknown key.
func (c Config) Get(key string) (string, bool) {
	return configKeys.Get(c, key)
}

// Validate returns an ErrConfig naming the first interval that is not
// more than 0.
func (c Config) Validate() error {
	return configKeys.Validate(c, ErrConfig)
}

// Config's keys, in Keys order.
var configKeys = configkeys.Table[Config]{
	configkeys.Duration("fleet.registry.heartbeat_seconds", time.Second, func(c *Config) *time.Duration { return &c.Heartbeat }, configkeys.Positive),
	configkeys.Duration("fleet.registry.refresh_seconds", time.Second, func(c *Config) *time.Duration { return &c.Refresh }, configkeys.Positive),
	configkeys.Duration("fleet.registry.offline_after_seconds", time.Second, func(c *Config) *time.Duration { return &c.OfflineAfter }, configkeys.Positive),
}
