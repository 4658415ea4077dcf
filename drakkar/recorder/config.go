// Config: the recorder's keys of the worker configuration (storage.dir,
// shared.dir, ui.enabled, ui.recorder.*), their defaults, --set parsing,
// validation and the mode helpers.

package recorder

import (
	"errors"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/internal/configkeys"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
)

// ErrConfig is returned by Config.Set and Config.Validate for an unknown key
// or a bad value; the message names the key. errors.Is(err,
// recordstore.ErrInvalid) holds as well.
var ErrConfig = recordstore.Invalidf("recorder config")

// MaxWorkerNameBytes is the longest worker name accepted: the name starts
// every file name of the worker (<worker>-<YYYY-MM-DD__HH_MM_SS>.db.meta.json
// adds 34 bytes), and most filesystems stop at 255 bytes.
const MaxWorkerNameBytes = 200

// MinMaxBuffer is the smallest ui.recorder.max_buffer accepted.
const MinMaxBuffer = 1000

// Config is what the recorder reads from the worker configuration. The
// zero value is not usable: start from DefaultConfig. Durations are
// time.Duration here; their keys take numbers with fractions in the key's
// unit (rotation_interval_hours: 0.001 is 3.6 s).
type Config struct {
	// StorageDir is storage.dir: the worker's own files. "" is memory-only
	// mode (see MemoryOnly).
	StorageDir string
	// SharedDir is shared.dir: the folder of the fleet. "" means StorageDir
	// (see Shared).
	SharedDir string
	// WorkerName is worker.name: the first part of every file name.
	WorkerName string
	// ClusterName is cluster.name, any text; its history folder name is
	// sanitized (see HistoryDir).
	ClusterName string
	// UIEnabled is ui.enabled (default true); false means no recorder at
	// all.
	UIEnabled bool

	// StoreEvents is ui.recorder.store_events (default true).
	StoreEvents bool
	// StoreConfig is ui.recorder.store_config (default true).
	StoreConfig bool
	// StoreState is ui.recorder.store_state (default true).
	StoreState bool
	// StateSyncInterval is ui.recorder.state_sync_interval_seconds
	// (default 10 s): the worker_state and resource_sample period.
	StateSyncInterval time.Duration
	// RotationInterval is ui.recorder.rotation_interval_hours (default 1 h).
	RotationInterval time.Duration
	// FlushInterval is ui.recorder.flush_interval_seconds. The spec names
	// the key without a default; ours is 1 s.
	FlushInterval time.Duration
	// MaxBuffer is ui.recorder.max_buffer: how many events wait in memory
	// at most. The spec names no default; ours is 50000, and at least
	// MinMaxBuffer is required.
	MaxBuffer int
	// MaxFlushRetries is ui.recorder.max_flush_retries: a batch that failed
	// to flush this many consecutive times is dropped. The spec names no
	// default; ours is 3. 0 drops a batch at its first failure.
	MaxFlushRetries int
	// OutputMinDuration is ui.recorder.output_min_duration_ms (default
	// 500 ms).
	OutputMinDuration time.Duration
	// EventMinDuration is ui.recorder.event_min_duration_ms (default 0 =
	// persist everything).
	EventMinDuration time.Duration
	// StoreOutput is ui.recorder.store_output (default true).
	StoreOutput bool
	// StoreStdin is ui.recorder.store_stdin (default false).
	StoreStdin bool
	// StdinMaxBytes is ui.recorder.stdin_max_bytes (default 65536; 0 =
	// unlimited).
	StdinMaxBytes int
}

// DefaultConfig returns the spec's defaults, with our choices where the
// spec names none (flush interval 1 s, max buffer 50000, 3 flush retries),
// memory-only (no storage.dir) and no worker name.
func DefaultConfig() Config {
	return Config{
		UIEnabled:         true,
		StoreEvents:       true,
		StoreConfig:       true,
		StoreState:        true,
		StateSyncInterval: 10 * time.Second,
		RotationInterval:  time.Hour,
		FlushInterval:     time.Second,
		MaxBuffer:         50000,
		MaxFlushRetries:   3,
		OutputMinDuration: 500 * time.Millisecond,
		EventMinDuration:  0,
		StoreOutput:       true,
		StoreStdin:        false,
		StdinMaxBytes:     65536,
	}
}

// MemoryOnly reports whether storage.dir is empty: no recorder files, no
// watchdog, no history.
func (c Config) MemoryOnly() bool { return c.StorageDir == "" }

// WritesFiles reports whether the recorder writes files at all: ui.enabled
// is on and storage.dir is set. Otherwise there are no recorder files, no
// watchdog and nothing sealed (the spec's "Modes").
func (c Config) WritesFiles() bool { return c.UIEnabled && !c.MemoryOnly() }

// Shared is the folder of the fleet: SharedDir, or StorageDir when
// SharedDir is empty.
func (c Config) Shared() string {
	if c.SharedDir != "" {
		return c.SharedDir
	}
	return c.StorageDir
}

// HistoryDir is <shared>/history/<sanitized cluster>, the one history folder
// this worker writes into; "" in memory-only mode.
func (c Config) HistoryDir() string {
	if c.MemoryOnly() {
		return ""
	}
	return filepath.Join(c.Shared(), "history", dbfiles.SanitizeCluster(c.ClusterName))
}

// Keys lists every key Set accepts, in a fixed order.
func Keys() []string { return configKeys.Names() }

// Set sets one key from its text, as given by --set key=value: dotted spec
// key names, bools as true/false, integers in decimal, durations as
// numbers (fractions allowed) in the key's unit. An unknown key or an
// unparsable value is an ErrConfig naming the key, and c is unchanged.
// Range rules are checked by Validate, not here.
func (c *Config) Set(key, value string) error {
	return configKeys.Set(c, key, value, ErrConfig)
}

// Get returns the value of a key in the text form Set accepts, and false
// for an unknown key.
func (c Config) Get(key string) (string, bool) {
	return configKeys.Get(c, key)
}

// Validate checks every key and returns one ErrConfig for the first bad
// one, naming it: "ui.recorder.max_buffer: must be at least 1000, got 10".
func (c Config) Validate() error {
	return configKeys.Validate(c, ErrConfig)
}

// configKey is one key: how to set it from text, read it back and check
// it.
type configKey = configkeys.Key[Config]

var configKeys = configkeys.Table[Config]{
	stringKey("storage.dir", func(c *Config) *string { return &c.StorageDir }, checkPath),
	stringKey("shared.dir", func(c *Config) *string { return &c.SharedDir }, checkPath),
	stringKey("worker.name", func(c *Config) *string { return &c.WorkerName }, workerNameProblem),
	stringKey("cluster.name", func(c *Config) *string { return &c.ClusterName }, dbfiles.ClusterNameProblem),
	boolKey("ui.enabled", func(c *Config) *bool { return &c.UIEnabled }),
	boolKey("ui.recorder.store_events", func(c *Config) *bool { return &c.StoreEvents }),
	boolKey("ui.recorder.store_config", func(c *Config) *bool { return &c.StoreConfig }),
	boolKey("ui.recorder.store_state", func(c *Config) *bool { return &c.StoreState }),
	durationKey("ui.recorder.state_sync_interval_seconds", time.Second, false, func(c *Config) *time.Duration { return &c.StateSyncInterval }),
	durationKey("ui.recorder.rotation_interval_hours", time.Hour, false, func(c *Config) *time.Duration { return &c.RotationInterval }),
	durationKey("ui.recorder.flush_interval_seconds", time.Second, false, func(c *Config) *time.Duration { return &c.FlushInterval }),
	intKey("ui.recorder.max_buffer", MinMaxBuffer, func(c *Config) *int { return &c.MaxBuffer }),
	intKey("ui.recorder.max_flush_retries", 0, func(c *Config) *int { return &c.MaxFlushRetries }),
	durationKey("ui.recorder.output_min_duration_ms", time.Millisecond, true, func(c *Config) *time.Duration { return &c.OutputMinDuration }),
	durationKey("ui.recorder.event_min_duration_ms", time.Millisecond, true, func(c *Config) *time.Duration { return &c.EventMinDuration }),
	boolKey("ui.recorder.store_output", func(c *Config) *bool { return &c.StoreOutput }),
	boolKey("ui.recorder.store_stdin", func(c *Config) *bool { return &c.StoreStdin }),
	intKey("ui.recorder.stdin_max_bytes", 0, func(c *Config) *int { return &c.StdinMaxBytes }),
}

// stringKey is a text key; check (nil = any text) judges its value.
func stringKey(name string, field func(*Config) *string, check func(string) error) configKey {
	k := configKey{
		Name: name,
		Set:  func(c *Config, v string) error { *field(c) = v; return nil },
		Get:  func(c Config) string { return *field(&c) },
	}
	if check != nil {
		k.Check = func(c Config) error { return check(*field(&c)) }
	}
	return k
}

func boolKey(name string, field func(*Config) *bool) configKey {
	return configKey{
		Name: name,
		Set: func(c *Config, v string) error {
			switch v {
			case "true":
				*field(c) = true
			case "false":
				*field(c) = false
			default:
				return errors.New("must be true or false, got " + recordstore.Quote(v))
			}
			return nil
		},
		Get: func(c Config) string { return strconv.FormatBool(*field(&c)) },
	}
}

func intKey(name string, min int, field func(*Config) *int) configKey {
	return configKey{
		Name: name,
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return errors.New("must be an integer, got " + recordstore.Quote(v))
			}
			*field(c) = n
			return nil
		},
		Get: func(c Config) string { return strconv.Itoa(*field(&c)) },
		Check: func(c Config) error {
			if n := *field(&c); n < min {
				return errors.New("must be at least " + strconv.Itoa(min) + ", got " + strconv.Itoa(n))
			}
			return nil
		},
	}
}

// durationKey is a key holding a number of units; zeroOK says whether 0 is
// allowed (thresholds) or the value must be positive (intervals).
func durationKey(name string, unit time.Duration, zeroOK bool, field func(*Config) *time.Duration) configKey {
	return configKey{
		Name: name,
		Set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			d := f * float64(unit)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(d) >= math.MaxInt64 {
				return errors.New("must be a number, got " + recordstore.Quote(v))
			}
			*field(c) = time.Duration(d)
			return nil
		},
		Get: func(c Config) string {
			return strconv.FormatFloat(float64(*field(&c))/float64(unit), 'g', -1, 64)
		},
		Check: func(c Config) error {
			d := *field(&c)
			switch {
			case d < 0:
				return errors.New("must not be negative, got " + d.String())
			case d == 0 && !zeroOK:
				return errors.New("must be more than 0, got " + d.String())
			}
			return nil
		},
	}
}

func checkPath(p string) error {
	if strings.IndexByte(p, 0) >= 0 {
		return errors.New("must not contain NUL")
	}
	return nil
}

// CheckWorkerName returns an ErrConfig naming worker.name unless name can
// start the worker's file names: not empty, at most MaxWorkerNameBytes bytes
// of valid UTF-8, no '/', '\\', NUL or other control character, and not
// starting with '.' (hidden files are the folder's own: .archive.lock, work
// files).
func CheckWorkerName(name string) error {
	if err := workerNameProblem(name); err != nil {
		return recordstore.Errorf(ErrConfig, "worker.name: %s", err.Error())
	}
	return nil
}

func workerNameProblem(name string) error {
	var why string
	switch {
	case name == "":
		why = "must not be empty"
	case len(name) > MaxWorkerNameBytes:
		why = "must be at most " + strconv.Itoa(MaxWorkerNameBytes) + " bytes, got " + strconv.Itoa(len(name))
	case !utf8.ValidString(name):
		why = "must be valid UTF-8"
	case strings.ContainsAny(name, `/\`):
		why = "must not contain a path separator, got " + recordstore.Quote(name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		why = "must not contain NUL or control characters, got " + recordstore.Quote(name)
	case name[0] == '.':
		why = "must not start with '.', got " + recordstore.Quote(name)
	default:
		return nil
	}
	return errors.New(why)
}
