// Entry: one cache_entries row, its scopes and validation, and the bound
// kind the engine writes it through.

package cache

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
)

// Scope is who an entry is shared with.
type Scope string

// The scopes of the spec's CHECK constraint.
const (
	// ScopeLocal never leaves its worker.
	ScopeLocal Scope = "local"
	// ScopeCluster goes to the workers of the same cluster.
	ScopeCluster Scope = "cluster"
	// ScopeGlobal goes to every worker of the fleet.
	ScopeGlobal Scope = "global"
)

// Valid reports whether s is one of the three scopes.
func (s Scope) Valid() bool { return s == ScopeLocal || s == ScopeCluster || s == ScopeGlobal }

// Kind, table and stream names of the cache file.
const (
	// KindName is the bound kind of cache_entries.
	KindName = "cache_entries"
	// Stream is the one stream of that kind.
	Stream = "cache_entries"
)

// Entry is one cache_entries row; its JSON form is the exchange's row.
type Entry struct {
	Key string `json:"key"`
	// Scope is local, cluster or global.
	Scope Scope `json:"scope"`
	// Value is the stored JSON text, opaque: never parsed for LWW.
	Value string `json:"value"`
	// SizeBytes is the UTF-8 length of Value as its writer encoded it.
	SizeBytes int64 `json:"size_bytes"`
	// CreatedAtMS is kept when an entry is overwritten.
	CreatedAtMS int64 `json:"created_at_ms"`
	// UpdatedAtMS is the LWW version.
	UpdatedAtMS int64 `json:"updated_at_ms"`
	// ExpiresAtMS is nil for an entry that never expires.
	ExpiresAtMS *int64 `json:"expires_at_ms"`
	// OriginWorkerID is the worker that wrote it: the LWW tiebreak.
	OriginWorkerID string `json:"origin_worker_id"`
}

// Expired reports whether e is expired at nowMS: its expiry is at or
// before it.
func (e Entry) Expired(nowMS int64) bool { return e.ExpiresAtMS != nil && *e.ExpiresAtMS <= nowMS }

// Check returns an error wrapping ErrBadEntry when e breaks the table's
// rules or the cache's: an empty or non-UTF-8 key or origin, an unknown
// scope, a value that is not JSON text, a negative size.
func (e Entry) Check() error {
	switch {
	case e.Key == "" || !utf8.ValidString(e.Key):
		return recordstore.Errorf(ErrBadEntry, "the key must be non-empty UTF-8 text")
	case !e.Scope.Valid():
		return recordstore.Errorf(ErrBadEntry, "key %q: scope %q is not local, cluster or global", e.Key, e.Scope)
	case !json.Valid([]byte(e.Value)):
		return recordstore.Errorf(ErrBadEntry, "key %q: the value is not JSON text", e.Key)
	case e.SizeBytes < 0:
		return recordstore.Errorf(ErrBadEntry, "key %q: size_bytes %d is negative", e.Key, e.SizeBytes)
	case e.OriginWorkerID == "" || !utf8.ValidString(e.OriginWorkerID):
		return recordstore.Errorf(ErrBadEntry, "key %q: origin_worker_id must be non-empty UTF-8 text", e.Key)
	}
	return nil
}

// values is e as the kind's stored values, in column order.
func (e Entry) values() []any {
	var exp any
	if e.ExpiresAtMS != nil {
		exp = *e.ExpiresAtMS
	}
	return []any{e.Key, string(e.Scope), e.Value, e.SizeBytes, e.CreatedAtMS, e.UpdatedAtMS, exp, e.OriginWorkerID}
}

// Kind returns the bound kind of cache_entries: the spec's DDL verbatim,
// keyed on key, lww on updated_at_ms with origin_worker_id as tiebreak.
func Kind() recordstore.Kind {
	col := func(n string, t recordstore.ColumnType, req bool) recordstore.Column {
		return recordstore.Column{Name: n, Type: t, Required: req}
	}
	s, i := recordstore.TypeString, recordstore.TypeInteger
	return recordstore.Kind{
		Name: KindName,
		Columns: []recordstore.Column{
			col("key", s, true), col("scope", s, true), col("value", s, true), col("size_bytes", i, true),
			col("created_at_ms", i, true), col("updated_at_ms", i, true), col("expires_at_ms", i, false),
			col("origin_worker_id", s, true),
		},
		Key:        []string{"key"},
		OnConflict: recordstore.ConflictLWW,
		LWW:        &recordstore.LWW{Version: "updated_at_ms", Tiebreak: "origin_worker_id"},
		Table: &recordstore.BoundTable{Name: "cache_entries",
			DDL: append([]string{dbfiles.CacheEntriesDDL}, dbfiles.CacheIndexDDL...)},
	}
}

// ptr returns a pointer to v.
func ptr(v int64) *int64 { return &v }
