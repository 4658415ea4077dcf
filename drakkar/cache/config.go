// Config: the keys of the cache and of its exchange, with the spec's
// defaults.

package cache

import (
	"time"

	"github.com/fb46ecde/records/drakkar/internal/configkeys"
	"github.com/fb46ecde/records/recordstore"
)

// Config holds the cache's keys.
type Config struct {
	// Enabled is cache.enabled (default false: no file, the API is a
	// no-op).
	Enabled bool
	// StorageDir is storage.dir; empty turns the engine off
	// (cache_engine_disabled_no_storage_dir).
	StorageDir string
	// WorkerName is worker.name: the file's name and the origin of local
	// writes.
	WorkerName string
	// ClusterName is cluster.name: the peers of the same cluster get
	// cluster and global rows, the others global only.
	ClusterName string
	// FlushInterval is cache.flush_interval_seconds (3).
	FlushInterval time.Duration
	// CleanupInterval is cache.cleanup_interval_seconds (60).
	CleanupInterval time.Duration
	// MaxMemoryEntries is cache.max_memory_entries (10000): the size of
	// the LRU of clean entries.
	MaxMemoryEntries int
	// Exchange is fleet.cache_exchange.enabled (default true): serve the
	// route and pull peers.
	Exchange bool
	// ExchangeInterval is fleet.cache_exchange.interval_seconds (30).
	ExchangeInterval time.Duration
}

// DefaultConfig returns the spec's defaults: the cache off.
func DefaultConfig() Config {
	return Config{
		FlushInterval:    3 * time.Second,
		CleanupInterval:  60 * time.Second,
		MaxMemoryEntries: 10000,
		Exchange:         true,
		ExchangeInterval: 30 * time.Second,
	}
}

// Keys lists the keys Set accepts, in a fixed order: the cache's and its
// exchange's (storage.dir, worker.name and cluster.name are the
// recorder's keys, copied in by the worker).
func Keys() []string { return configKeys.Names() }

// Set sets one key from its text, as given by --set key=value: bools as
// true/false, integers in decimal, durations as numbers of seconds
// (fractions allowed) rounded to the nearest nanosecond, spaces around
// the text ignored, as every drakkar configuration reads them. An unknown
// key or an unparsable value is an ErrConfig naming the key, and c is
// unchanged. Ranges are checked by Validate.
func (c *Config) Set(key, value string) error {
	return configKeys.Set(c, key, value, ErrConfig)
}

// Get returns the value of a key in the text form Set accepts, and false
// for an unknown key.
func (c Config) Get(key string) (string, bool) {
	return configKeys.Get(c, key)
}

// Validate returns an ErrConfig naming the first bad key: worker.name
// missing while the cache is enabled, an interval that is not more than
// 0, a negative cache.max_memory_entries.
func (c Config) Validate() error {
	if c.Enabled && c.WorkerName == "" {
		return recordstore.Errorf(ErrConfig, "worker.name: required")
	}
	return configKeys.Validate(c, ErrConfig)
}

// Config's keys, in Keys order; every parse rule is configkeys'.
var configKeys = configkeys.Table[Config]{
	configkeys.Bool("cache.enabled", func(c *Config) *bool { return &c.Enabled }),
	configkeys.Duration("cache.flush_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.FlushInterval }, configkeys.Positive),
	configkeys.Duration("cache.cleanup_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.CleanupInterval }, configkeys.Positive),
	configkeys.Int("cache.max_memory_entries", 0, func(c *Config) *int { return &c.MaxMemoryEntries }),
	configkeys.Bool("fleet.cache_exchange.enabled", func(c *Config) *bool { return &c.Exchange }),
	configkeys.Duration("fleet.cache_exchange.interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.ExchangeInterval }, configkeys.Positive),
}

// Engine reports whether the cache engine runs: enabled with a
// storage.dir.
func (c Config) Engine() bool { return c.Enabled && c.StorageDir != "" }
