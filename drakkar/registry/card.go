// The card: its fields, its canonical bytes and its strict decoding.

package registry

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
)

// CardVersion is the version of the card format this package writes and
// reads.
const CardVersion = 1

// The states a card names.
const (
	StateRunning = "running"
	StateStopped = "stopped"
)

// Mark is the cursor of the newest row a worker originated in one scope:
// {"ms": updated_at_ms, "key": key}.
type Mark struct {
	MS  int64  `json:"ms"`
	Key string `json:"key"`
}

// Features are what a worker offers its peers. Cache is nil when the
// worker does not serve the cache exchange (the card says "features":
// {}), and a map — empty when it originated no cluster or global row yet
// — when it does ({"cache": {...}}), keyed by scope.
type Features struct {
	Cache map[string]Mark
	// CacheResync counts the writes other processes spooled into the
	// worker's running cache ("cache_resync", written only when above 0).
	// Such a row carries the writing process's clock, so it may sit
	// behind a cursor a peer already holds: when the count changes, peers
	// pull the worker's rows again from the start.
	CacheResync int64
}

// Card is one worker's registry card.
type Card struct {
	// Version is CardVersion.
	Version int
	// Worker is worker.name; the card's file is <Worker>.json.
	Worker string
	// Instance is the process's 16 hex instance id.
	Instance string
	// Cluster is cluster.name as configured.
	Cluster string
	// URL is the base URL of the worker's debug API (the peer routes are
	// under it); empty when it serves none.
	URL string
	// StartedAt is when the process started.
	StartedAt time.Time
	// PublishedAt is when this card was written, on the worker's clock
	// (informative: liveness uses the file's age on the file server's
	// clock).
	PublishedAt time.Time
	// State is StateRunning, or StateStopped after a clean stop.
	State string
	// Features are the worker's offers.
	Features Features
}

// FileName is the name of worker's card.
func FileName(worker string) string { return worker + ".json" }

// Dir is the cards' folder: <dir>/fleet/workers, where dir is shared.dir,
// or storage.dir when shared.dir is empty.
func Dir(sharedDir, storageDir string) string {
	if sharedDir == "" {
		sharedDir = storageDir
	}
	return filepath.Join(sharedDir, "fleet", "workers")
}

// Encode returns the card's canonical JSON (sorted keys, compact, raw
// UTF-8, no trailing newline).
func (c Card) Encode() ([]byte, error) {
	feats := map[string]any{}
	if c.Features.Cache != nil {
		marks := map[string]any{}
		for s, m := range c.Features.Cache {
			marks[s] = map[string]any{"ms": m.MS, "key": m.Key}
		}
		feats["cache"] = marks
		if c.Features.CacheResync > 0 {
			feats["cache_resync"] = c.Features.CacheResync
		}
	}
	return dbfiles.CanonicalJSON(map[string]any{
		"version": c.Version, "worker": c.Worker, "instance": c.Instance, "cluster": c.Cluster,
		"url": c.URL, "started_at": dbfiles.FormatTime(c.StartedAt),
		"published_at": dbfiles.FormatTime(c.PublishedAt), "state": c.State, "features": feats,
	})
}

// wireCard is a card as JSON, for decoding.
type wireCard struct {
	Version     *int                       `json:"version"`
	Worker      *string                    `json:"worker"`
	Instance    *string                    `json:"instance"`
	Cluster     *string                    `json:"cluster"`
	URL         *string                    `json:"url"`
	StartedAt   *string                    `json:"started_at"`
	PublishedAt *string                    `json:"published_at"`
	State       *string                    `json:"state"`
	Features    map[string]json.RawMessage `json:"features"`
}

// DecodeCard reads a card. Every field is required and typed; an unknown
// version, state or time shape is ErrBadCard. Unknown keys, and unknown
// features, are ignored (a later minor addition must not hide a worker).
func DecodeCard(b []byte) (Card, error) {
	var w wireCard
	if err := json.Unmarshal(b, &w); err != nil {
		return Card{}, recordstore.Errorf(ErrBadCard, "%w", err)
	}
	if w.Version == nil || w.Worker == nil || w.Instance == nil || w.Cluster == nil || w.URL == nil ||
		w.StartedAt == nil || w.PublishedAt == nil || w.State == nil || w.Features == nil {
		return Card{}, recordstore.Errorf(ErrBadCard, "a field is missing")
	}
	if *w.Version != CardVersion {
		return Card{}, recordstore.Errorf(ErrBadCard, "version %d, this build reads %d", *w.Version, CardVersion)
	}
	if *w.State != StateRunning && *w.State != StateStopped {
		return Card{}, recordstore.Errorf(ErrBadCard, "state %q", *w.State)
	}
	if *w.Worker == "" || strings.ContainsAny(*w.Worker, "/\\\x00") {
		return Card{}, recordstore.Errorf(ErrBadCard, "worker %q", *w.Worker)
	}
	c := Card{Version: *w.Version, Worker: *w.Worker, Instance: *w.Instance, Cluster: *w.Cluster, URL: *w.URL, State: *w.State}
	var err error
	if c.StartedAt, err = dbfiles.ParseTime(*w.StartedAt); err != nil {
		return Card{}, recordstore.Errorf(ErrBadCard, "started_at: %w", err)
	}
	if c.PublishedAt, err = dbfiles.ParseTime(*w.PublishedAt); err != nil {
		return Card{}, recordstore.Errorf(ErrBadCard, "published_at: %w", err)
	}
	if raw, ok := w.Features["cache"]; ok {
		var marks map[string]*Mark
		if err := json.Unmarshal(raw, &marks); err != nil || marks == nil {
			return Card{}, recordstore.Errorf(ErrBadCard, "features.cache is not an object of marks")
		}
		c.Features.Cache = map[string]Mark{}
		for s, m := range marks {
			if m == nil {
				return Card{}, recordstore.Errorf(ErrBadCard, "features.cache.%s is null", s)
			}
			c.Features.Cache[s] = *m
		}
		if raw, ok := w.Features["cache_resync"]; ok {
			if err := json.Unmarshal(raw, &c.Features.CacheResync); err != nil || c.Features.CacheResync < 0 {
				return Card{}, recordstore.Errorf(ErrBadCard, "features.cache_resync is not a count")
			}
		}
	}
	return c, nil
}

// Scopes returns the scopes of the card's cache marks, sorted.
func (f Features) Scopes() []string {
	out := make([]string, 0, len(f.Cache))
	for s := range f.Cache {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
