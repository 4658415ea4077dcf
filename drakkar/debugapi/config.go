package debugapi

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
)

// Defaults of the ui.* keys the routes read.
const (
	// DefaultTraceHistoryMaxFiles is ui.trace.history_max_files.
	DefaultTraceHistoryMaxFiles = 256
	// DefaultTraceHistoryMaxSeconds is ui.trace.history_max_seconds.
	//lint:ignore ST1011 named after the key, as the agreed API spells it
	DefaultTraceHistoryMaxSeconds = 10 * time.Second
)

// Config holds the ui.* keys the routes use and the worker's folders and
// names.
type Config struct {
	// AuthToken is ui.auth_token; "" turns auth off.
	AuthToken string
	// MergeEnabled is ui.merge_enabled (default true).
	MergeEnabled bool
	// TraceHistoryMaxFiles is ui.trace.history_max_files (default 256).
	TraceHistoryMaxFiles int
	// TraceHistoryMaxSeconds is ui.trace.history_max_seconds (default 10 s).
	//lint:ignore ST1011 named after the key, as the agreed API spells it
	TraceHistoryMaxSeconds time.Duration
	// StorageDir is storage.dir ("" is memory-only mode).
	StorageDir string
	// SharedDir is shared.dir ("" means StorageDir).
	SharedDir string
	// WorkerName is worker.name.
	WorkerName string
	// ClusterName is cluster.name (its history folder name is sanitized).
	ClusterName string
	// URL is this worker's API URL as its registry card gives it (shown
	// by /api/v1/workers when the registry has no card of its own).
	URL string
}

// DefaultConfig is Config with the spec's defaults.
func DefaultConfig() Config {
	return Config{
		MergeEnabled:           true,
		TraceHistoryMaxFiles:   DefaultTraceHistoryMaxFiles,
		TraceHistoryMaxSeconds: DefaultTraceHistoryMaxSeconds,
	}
}

// shared is the effective shared folder: SharedDir, else StorageDir; ""
// in memory-only mode (StorageDir empty), where nothing is served from disk.
func (c Config) shared() string {
	if c.StorageDir == "" {
		return ""
	}
	if c.SharedDir != "" {
		return c.SharedDir
	}
	return c.StorageDir
}

// Options configure New.
type Options struct {
	Config Config
	// Recorder is the worker's recorder; nil in memory-only mode.
	Recorder *recorder.Recorder
	// Cache is the worker's cache; nil when the cache is off.
	Cache *cache.Cache
	// Registry is the worker's registry presence; nil without a registry.
	Registry *registry.Registry
	// Metrics is served at /metrics; nil answers 404.
	Metrics prometheus.Gatherer
	// Ready returns the reasons the worker is not ready; nil or empty: ready.
	Ready func() []string
	// Logger receives the routes' failures; default slog.Default().
	Logger *slog.Logger
	// Now is the clock (merge result names, cache expiry); default time.Now.
	Now func() time.Time
}
