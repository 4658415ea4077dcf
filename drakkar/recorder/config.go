// Config: the recorder's keys of the worker configuration (storage.dir,
// shared.dir, ui.enabled, ui.recorder.*), their defaults, --set parsing,
// validation and the mode helpers.

package recorder

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/internal/configkeys"
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
// numbers (fractions allowed) in the key's unit, rounded to the nearest
// nanosecond; spaces around a bool, integer or duration are ignored. An unknown key or an
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

// Config's keys, in Keys order. Durations round to the nearest
// nanosecond of the key's unit and every parse rule is configkeys'.
var configKeys = configkeys.Table[Config]{
	configkeys.String("storage.dir", func(c *Config) *string { return &c.StorageDir }, checkPath),
	configkeys.String("shared.dir", func(c *Config) *string { return &c.SharedDir }, checkPath),
	configkeys.String("worker.name", func(c *Config) *string { return &c.WorkerName }, workerNameProblem),
	configkeys.String("cluster.name", func(c *Config) *string { return &c.ClusterName }, dbfiles.ClusterNameProblem),
	configkeys.Bool("ui.enabled", func(c *Config) *bool { return &c.UIEnabled }),
	configkeys.Bool("ui.recorder.store_events", func(c *Config) *bool { return &c.StoreEvents }),
	configkeys.Bool("ui.recorder.store_config", func(c *Config) *bool { return &c.StoreConfig }),
	configkeys.Bool("ui.recorder.store_state", func(c *Config) *bool { return &c.StoreState }),
	configkeys.Duration("ui.recorder.state_sync_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.StateSyncInterval }, configkeys.Positive),
	configkeys.Duration("ui.recorder.rotation_interval_hours", time.Hour, func(c *Config) *time.Duration { return &c.RotationInterval }, configkeys.Positive),
	configkeys.Duration("ui.recorder.flush_interval_seconds", time.Second, func(c *Config) *time.Duration { return &c.FlushInterval }, configkeys.Positive),
	configkeys.Int("ui.recorder.max_buffer", MinMaxBuffer, func(c *Config) *int { return &c.MaxBuffer }),
	configkeys.Int("ui.recorder.max_flush_retries", 0, func(c *Config) *int { return &c.MaxFlushRetries }),
	configkeys.Duration("ui.recorder.output_min_duration_ms", time.Millisecond, func(c *Config) *time.Duration { return &c.OutputMinDuration }, configkeys.NotNegative),
	configkeys.Duration("ui.recorder.event_min_duration_ms", time.Millisecond, func(c *Config) *time.Duration { return &c.EventMinDuration }, configkeys.NotNegative),
	configkeys.Bool("ui.recorder.store_output", func(c *Config) *bool { return &c.StoreOutput }),
	configkeys.Bool("ui.recorder.store_stdin", func(c *Config) *bool { return &c.StoreStdin }),
	configkeys.Int("ui.recorder.stdin_max_bytes", 0, func(c *Config) *int { return &c.StdinMaxBytes }),
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
