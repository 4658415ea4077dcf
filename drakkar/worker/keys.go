// keys: the keys the worker owns itself (the debug API's, the registry's,
// the cache's and the drain timeout), with their parsers and range checks.

package worker

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ownKey is one key of ownKeys.
type ownKey struct {
	name  string
	set   func(c *Config, v string) error
	check func(c Config) error
}

// ownKeys are the keys no component's Set knows.
var ownKeys = []ownKey{
	{name: "ui.addr", set: func(c *Config, v string) error { c.UI.Addr = v; return nil }, check: func(c Config) error { return checkAddr(c.UI.Addr) }},
	{name: "ui.url", set: func(c *Config, v string) error { c.UI.URL = strings.TrimRight(v, "/"); return nil }, check: func(c Config) error { return checkURL(c.UI.URL) }},
	{name: "ui.auth_token", set: func(c *Config, v string) error { c.UI.AuthToken = v; return nil }},
	boolField("ui.insecure_listen", func(c *Config) *bool { return &c.UI.InsecureListen }),
	boolField("ui.merge_enabled", func(c *Config) *bool { return &c.UI.MergeEnabled }),
	intField("ui.trace.history_max_files", 1, func(c *Config) *int { return &c.UI.TraceHistoryMaxFiles }),
	durField("ui.trace.history_max_seconds", time.Second, func(c *Config) *time.Duration { return &c.UI.TraceHistoryMaxTime }),
	boolField("cache.enabled", func(c *Config) *bool { return &c.Cache.Enabled }),
	durField("cache.flush_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.Cache.FlushInterval }),
	durField("cache.cleanup_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.Cache.CleanupInterval }),
	intField("cache.max_memory_entries", 0, func(c *Config) *int { return &c.Cache.MaxMemoryEntries }),
	boolField("fleet.cache_exchange.enabled", func(c *Config) *bool { return &c.Cache.Exchange }),
	durField("fleet.cache_exchange.interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.Cache.ExchangeInterval }),
	durField("fleet.registry.heartbeat_seconds", time.Second, func(c *Config) *time.Duration { return &c.Registry.Heartbeat }),
	durField("fleet.registry.refresh_seconds", time.Second, func(c *Config) *time.Duration { return &c.Registry.Refresh }),
	durField("fleet.registry.offline_after_seconds", time.Second, func(c *Config) *time.Duration { return &c.Registry.OfflineAfter }),
	durField("executor.drain_timeout_seconds", time.Second, func(c *Config) *time.Duration { return &c.DrainTimeout }),
}

func findOwnKey(name string) (ownKey, bool) {
	for _, k := range ownKeys {
		if k.name == name {
			return k, true
		}
	}
	return ownKey{}, false
}

func boolField(name string, field func(*Config) *bool) ownKey {
	return ownKey{name: name, set: func(c *Config, v string) error {
		switch strings.TrimSpace(v) {
		case "true":
			*field(c) = true
		case "false":
			*field(c) = false
		default:
			return errors.New("must be true or false, got " + recordstore.Quote(v))
		}
		return nil
	}}
}

func intField(name string, min int, field func(*Config) *int) ownKey {
	return ownKey{name: name, set: func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return errors.New("must be an integer, got " + recordstore.Quote(v))
		}
		*field(c) = n
		return nil
	}, check: func(c Config) error {
		if n := *field(&c); n < min {
			return errors.New("must be at least " + strconv.Itoa(min) + ", got " + strconv.Itoa(n))
		}
		return nil
	}}
}

// durField is a positive duration given as a number (fractions allowed)
// of unit.
func durField(name string, unit time.Duration, field func(*Config) *time.Duration) ownKey {
	return ownKey{name: name, set: func(c *Config, v string) error {
		f, err := parseNumber(v)
		if err != nil {
			return err
		}
		d := f * float64(unit)
		if math.Abs(d) >= math.MaxInt64 {
			return errors.New("must be a number, got " + recordstore.Quote(v))
		}
		*field(c) = time.Duration(d)
		return nil
	}, check: func(c Config) error { return positive(*field(&c)) }}
}

func parseNumber(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("must be a number, got " + recordstore.Quote(v))
	}
	return f, nil
}

func positive(d time.Duration) error {
	if d <= 0 {
		return errors.New("must be more than 0, got " + d.String())
	}
	return nil
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, got " + recordstore.Quote(addr))
	}
	_ = host
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("port must be 0 to 65535, got " + recordstore.Quote(port))
	}
	return nil
}

func checkURL(u string) error {
	if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return errors.New("must start with http:// or https://, got " + recordstore.Quote(u))
	}
	return nil
}
