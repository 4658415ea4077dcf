// Config: the keys of the cache and of its exchange, with the spec's
// defaults.

package cache

import (
	"fmt"
	"time"
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

// Validate returns an error wrapping ErrConfig naming the first bad key.
func (c Config) Validate() error {
	switch {
	case c.Enabled && c.WorkerName == "":
		return fmt.Errorf("%w: worker.name: required", ErrConfig)
	case c.FlushInterval <= 0:
		return fmt.Errorf("%w: cache.flush_interval_seconds: must be > 0, got %v", ErrConfig, c.FlushInterval)
	case c.CleanupInterval <= 0:
		return fmt.Errorf("%w: cache.cleanup_interval_seconds: must be > 0, got %v", ErrConfig, c.CleanupInterval)
	case c.MaxMemoryEntries < 0:
		return fmt.Errorf("%w: cache.max_memory_entries: must be >= 0, got %d", ErrConfig, c.MaxMemoryEntries)
	case c.ExchangeInterval <= 0:
		return fmt.Errorf("%w: fleet.cache_exchange.interval_seconds: must be > 0, got %v", ErrConfig, c.ExchangeInterval)
	}
	return nil
}

// Engine reports whether the cache engine runs: enabled with a
// storage.dir.
func (c Config) Engine() bool { return c.Enabled && c.StorageDir != "" }
