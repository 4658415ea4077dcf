// Config: every key of a worker, and the one Set that routes a key to the
// component that owns it.

package worker

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/recordstore"
)

// DefaultAddr is ui.addr's default: the loopback interface only (the
// spec's security notes: the debug API listens on 127.0.0.1 unless
// configured).
const DefaultAddr = "127.0.0.1:8780"

// DefaultDrainTimeout is executor.drain_timeout_seconds's default.
const DefaultDrainTimeout = 30 * time.Second

// Config is a worker's whole configuration. The components' parts are
// their own Config types; the keys shared between them (storage.dir,
// shared.dir, worker.name, cluster.name, the rotation interval) are copied
// into each by Resolve. Start from DefaultConfig.
type Config struct {
	// Recorder holds storage.dir, shared.dir, worker.name, cluster.name,
	// ui.enabled and ui.recorder.*.
	Recorder recorder.Config
	// Archive holds history.archive.* and history.merged_retention_days.
	Archive archive.Config
	// Cache holds cache.* and fleet.cache_exchange.*.
	Cache cache.Config
	// UI holds the debug API's keys: ui.addr, ui.url, ui.auth_token,
	// ui.insecure_listen, ui.merge_enabled, ui.trace.*.
	UI UIConfig
	// Registry holds fleet.registry.*.
	Registry RegistryConfig
	// DrainTimeout is executor.drain_timeout_seconds: how long a clean stop
	// may take; the move of the sealed live file into the history folder
	// runs only while it has time left.
	DrainTimeout time.Duration
	// Ignored lists the keys Load ignored with a warning: unknown keys
	// inside ui.recorder, such as the removed rotation_interval_minutes,
	// retention_hours and retention_max_events.
	Ignored []string
}

// UIConfig is the debug API's part of the configuration.
type UIConfig struct {
	// Addr is ui.addr, host:port the debug API listens on (default
	// DefaultAddr; port 0 picks a free port).
	Addr string
	// URL is ui.url, the base URL put on the registry card and in
	// worker_config.debug_url; "" means http://<the bound address>
	// (this host's name for an unspecified address such as 0.0.0.0).
	URL string
	// AuthToken is ui.auth_token: when set, every route but /healthz,
	// /readyz and the peer exchange needs it.
	AuthToken string
	// InsecureListen is ui.insecure_listen (default false): the operator
	// means to serve the debug API off the loopback without AuthToken.
	// Without it, Open refuses such an address.
	InsecureListen bool
	// MergeEnabled is ui.merge_enabled (default true).
	MergeEnabled bool
	// TraceHistoryMaxFiles is ui.trace.history_max_files (default 256).
	TraceHistoryMaxFiles int
	// TraceHistoryMaxTime is ui.trace.history_max_seconds (default 10).
	TraceHistoryMaxTime time.Duration
}

// RegistryConfig is the fleet registry's part of the configuration
// (fleet.registry.*).
type RegistryConfig = registry.Config

// DefaultConfig returns the spec's defaults for every component, with
// ours where the spec names none (ui.addr DefaultAddr, drain 30 s).
func DefaultConfig() Config {
	return Config{
		Recorder: recorder.DefaultConfig(),
		Archive:  archive.DefaultConfig(),
		Cache:    cache.DefaultConfig(),
		UI: UIConfig{
			Addr:                 DefaultAddr,
			MergeEnabled:         true,
			TraceHistoryMaxFiles: 256,
			TraceHistoryMaxTime:  10 * time.Second,
		},
		Registry:     registry.DefaultConfig(),
		DrainTimeout: DefaultDrainTimeout,
	}
}

// Keys lists every key Set accepts, sorted.
func Keys() []string {
	var keys []string
	for _, p := range parts {
		keys = append(keys, p.keys()...)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// part is one component's share of the keys: the component's own key
// table behind its Set, reached through the worker's Config.
type part struct {
	keys func() []string
	set  func(c *Config, key, value string) error
}

// parts are the components whose keys Config.Set routes, in the order a
// shared key (the rotation interval) is set in each.
var parts = []part{
	{recorder.Keys, func(c *Config, k, v string) error { return c.Recorder.Set(k, v) }},
	{archive.Keys, func(c *Config, k, v string) error { return c.Archive.Set(k, v) }},
	{cache.Keys, func(c *Config, k, v string) error { return c.Cache.Set(k, v) }},
	{registry.Keys, func(c *Config, k, v string) error { return c.Registry.Set(k, v) }},
	{ownKeys.Names, func(c *Config, k, v string) error { return ownKeys.Set(c, k, v, ErrConfig) }},
}

// Set sets one key from its text, as --set key=value gives it: bools as
// true/false, integers in decimal, durations as numbers (fractions
// allowed) in the key's unit rounded to the nearest nanosecond, spaces
// around them ignored: every component parses a key's text the same way.
// A key known to several components (the rotation interval) is set in
// each. An unknown key, a moved key or an unparsable value is an
// ErrConfig naming the key, and c is unchanged. Ranges are checked by
// Validate.
func (c *Config) Set(key, value string) error {
	if to, ok := movedKey(key); ok {
		return recordstore.Errorf(ErrConfig, "%s: this key moved to %s; rename it", key, to)
	}
	next := *c
	known := false
	for _, p := range parts {
		if !slices.Contains(p.keys(), key) {
			continue
		}
		known = true
		if err := p.set(&next, key, value); err != nil {
			return wrapConfig(err)
		}
	}
	if !known {
		return recordstore.Errorf(ErrConfig, "%s: unknown key", key)
	}
	*c = next
	return nil
}

// wrapConfig makes a component's ErrConfig the worker's as well; the
// worker's own errors pass as they are.
func wrapConfig(err error) error {
	if errors.Is(err, ErrConfig) {
		return err
	}
	return recordstore.Errorf(ErrConfig, "%w", err)
}

// Resolve copies the keys the components share from the recorder's part
// into the others: storage.dir, worker.name and cluster.name into the
// cache, the rotation interval into the archive pass.
func (c *Config) Resolve() {
	c.Cache.StorageDir = c.Recorder.StorageDir
	c.Cache.WorkerName = c.Recorder.WorkerName
	c.Cache.ClusterName = c.Recorder.ClusterName
	c.Archive.RotationInterval = c.Recorder.RotationInterval
}

// Validate resolves c and returns one ErrConfig for the first bad key,
// naming it. worker.name is required (it names the registry card even in
// memory-only mode).
func (c *Config) Validate() error {
	c.Resolve()
	if err := recorder.CheckWorkerName(c.Recorder.WorkerName); err != nil {
		return wrapConfig(err)
	}
	for _, check := range []func() error{c.Recorder.Validate, c.Archive.Validate, c.Cache.Validate, c.Registry.Validate} {
		if err := check(); err != nil {
			return wrapConfig(err)
		}
	}
	return ownKeys.Validate(*c, ErrConfig)
}

// movedKeys are the names the spec's "Renamed and removed keys" says fail
// the load: the folder and archive keys that moved to storage.dir,
// shared.dir and history.*. A key equal to a name, or under it, fails.
var movedKeys = []struct{ old, to string }{
	{"ui.db_dir", "storage.dir"},
	{"ui.shared_dir", "shared.dir"},
	{"ui.recorder.db_dir", "storage.dir"},
	{"ui.recorder.shared_dir", "shared.dir"},
	{"ui.recorder.archive", "history.archive.*"},
	{"ui.recorder.merged_retention_days", "history.merged_retention_days"},
}

// movedKey reports whether key is (under) a moved name, and where it went.
func movedKey(key string) (string, bool) {
	for _, m := range movedKeys {
		if key == m.old || strings.HasPrefix(key, m.old+".") {
			return m.to, true
		}
	}
	return "", false
}

// ignoredKey reports whether an unknown key is ignored with a warning
// rather than failing the load: the spec makes every unknown key inside
// ui.recorder (such as the removed rotation_interval_minutes,
// retention_hours and retention_max_events) ignored.
func ignoredKey(key string) bool {
	return strings.HasPrefix(key, "ui.recorder.")
}

// isUnknown reports whether err is Set's unknown-key error.
func isUnknown(key string, err error) bool {
	if _, moved := movedKey(key); moved {
		return false
	}
	return errors.Is(err, ErrConfig) && !slices.Contains(Keys(), key)
}
