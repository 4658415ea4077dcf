package debugapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// WorkerItem is one item of GET /api/v1/workers.
type WorkerItem struct {
	WorkerName  string  `json:"worker_name"`
	ClusterName string  `json:"cluster_name"`
	URL         string  `json:"url"`
	IsCurrent   bool    `json:"is_current"`
	LastSeenTS  float64 `json:"last_seen_ts"`
	Online      bool    `json:"online"`
}

// workers serves GET /api/v1/workers: this worker, from its own
// configuration (never from a card, which anyone may write), then the
// other workers of the registry's last snapshot; the workers of this
// worker's cluster first, then the others, each group by name.
func (s *server) workers(w http.ResponseWriter, _ *http.Request) {
	c := s.opts.Config
	out := []WorkerItem{{WorkerName: c.WorkerName, ClusterName: c.ClusterName, URL: c.URL,
		IsCurrent: true, LastSeenTS: dbfiles.TS(s.now()), Online: true}}
	if reg := s.opts.Registry; reg != nil {
		for _, p := range reg.Peers() {
			if p.Worker == c.WorkerName {
				continue
			}
			out = append(out, WorkerItem{WorkerName: p.Worker, ClusterName: p.Cluster, URL: p.URL,
				LastSeenTS: dbfiles.TS(p.LastSeen), Online: p.Online})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := out[i].ClusterName == c.ClusterName, out[j].ClusterName == c.ClusterName
		if ci != cj {
			return ci
		}
		return out[i].WorkerName < out[j].WorkerName
	})
	writeJSON(w, http.StatusOK, out)
}

// cacheOn returns the cache, or answers 404 Cache is disabled.
func (s *server) cacheOn(w http.ResponseWriter) *cache.Cache {
	if s.opts.Cache == nil || !s.opts.Cache.Engine() {
		writeDetail(w, http.StatusNotFound, TextCacheDisabled)
		return nil
	}
	return s.opts.Cache
}

// Limits of GET /api/v1/debug/cache/entries.
const (
	DefaultCacheEntriesLimit = 200
	MaxCacheEntriesLimit     = 1000
)

// CacheEntriesPage is GET /api/v1/debug/cache/entries's body.
type CacheEntriesPage struct {
	// Entries is the page, by key.
	Entries []cache.Entry `json:"entries"`
	// Total is how many entries match the filters.
	Total int `json:"total"`
	// Limit and Offset are the page's bounds as applied.
	Limit  int64 `json:"limit"`
	Offset int64 `json:"offset"`
}

// cacheEntries serves GET /api/v1/debug/cache/entries?limit=&offset=
// &scope=&search=&expired_only=: the stored entries (the file's content)
// by key, filtered by exact scope, by a substring of the key and, with
// expired_only, to the expired ones; then paged.
func (s *server) cacheEntries(w http.ResponseWriter, r *http.Request) {
	c := s.cacheOn(w)
	if c == nil {
		return
	}
	limit, ok := rangeParam(w, r, "limit", DefaultCacheEntriesLimit, 0, MaxCacheEntriesLimit)
	if !ok {
		return
	}
	offset, ok := intParam(w, r, "offset", false, 0)
	if !ok {
		return
	}
	if offset < 0 {
		write422(w, "offset", MsgNonNegative)
		return
	}
	expiredOnly, ok := boolParam(w, r, "expired_only")
	if !ok {
		return
	}
	scope, _ := param(r, "scope")
	search, _ := param(r, "search")
	list, err := c.List(r.Context())
	if err != nil {
		s.internal(w, "cache-entries", err)
		return
	}
	nowMS := s.now().UnixMilli()
	match := make([]cache.Entry, 0, len(list))
	for _, e := range list {
		if (scope == "" || string(e.Scope) == scope) && strings.Contains(e.Key, search) && (!expiredOnly || e.Expired(nowMS)) {
			match = append(match, e)
		}
	}
	sort.Slice(match, func(i, j int) bool { return match[i].Key < match[j].Key })
	page := CacheEntriesPage{Entries: []cache.Entry{}, Total: len(match), Limit: limit, Offset: offset}
	if offset < int64(len(match)) {
		end := offset + limit
		if end > int64(len(match)) {
			end = int64(len(match))
		}
		page.Entries = append(page.Entries, match[offset:end]...)
	}
	writeJSON(w, http.StatusOK, page)
}

// TextCacheEntryNotFound is the 404 text of a missing cache key.
const TextCacheEntryNotFound = "Cache entry not found"

// CacheEntryDetail is GET /api/v1/debug/cache/entry/{key}'s body: the
// entry with Value decoded from its JSON text (null when the text is not
// JSON) and RawValue the text as stored.
type CacheEntryDetail struct {
	Key            string          `json:"key"`
	Scope          cache.Scope     `json:"scope"`
	Value          json.RawMessage `json:"value"`
	RawValue       string          `json:"raw_value"`
	SizeBytes      int64           `json:"size_bytes"`
	CreatedAtMS    int64           `json:"created_at_ms"`
	UpdatedAtMS    int64           `json:"updated_at_ms"`
	ExpiresAtMS    *int64          `json:"expires_at_ms"`
	OriginWorkerID string          `json:"origin_worker_id"`
}

// cacheEntry serves GET /api/v1/debug/cache/entry/{key}.
func (s *server) cacheEntry(w http.ResponseWriter, r *http.Request) {
	c := s.cacheOn(w)
	if c == nil {
		return
	}
	e, ok, err := c.Get(r.Context(), r.PathValue("key"))
	if err != nil {
		s.internal(w, "cache-entry", err)
		return
	}
	if !ok {
		writeDetail(w, http.StatusNotFound, TextCacheEntryNotFound)
		return
	}
	d := CacheEntryDetail{Key: e.Key, Scope: e.Scope, Value: json.RawMessage("null"), RawValue: e.Value,
		SizeBytes: e.SizeBytes, CreatedAtMS: e.CreatedAtMS, UpdatedAtMS: e.UpdatedAtMS,
		ExpiresAtMS: e.ExpiresAtMS, OriginWorkerID: e.OriginWorkerID}
	if json.Valid([]byte(e.Value)) {
		d.Value = json.RawMessage(e.Value)
	}
	writeJSON(w, http.StatusOK, d)
}

// CacheStats is GET /api/v1/debug/cache/stats's body: the public
// contract's four gauges, then this worker's details.
type CacheStats struct {
	// EntriesInMemory and BytesInMemory are the memory layer's distinct
	// keys and their values' bytes (cache.Cache.MemStats).
	EntriesInMemory int   `json:"entries_in_memory"`
	BytesInMemory   int64 `json:"bytes_in_memory"`
	// EntriesInDB and BytesInDB are the rows of the cache file and their
	// values' bytes.
	EntriesInDB int64            `json:"entries_in_db"`
	BytesInDB   int64            `json:"bytes_in_db"`
	ByScope     map[string]int64 `json:"by_scope"`
	Dirty       int              `json:"dirty"`
	Worker      string           `json:"worker"`
	Cluster     string           `json:"cluster"`
}

// cacheStats serves GET /api/v1/debug/cache/stats.
func (s *server) cacheStats(w http.ResponseWriter, r *http.Request) {
	c := s.cacheOn(w)
	if c == nil {
		return
	}
	list, err := c.List(r.Context())
	if err != nil {
		s.internal(w, "cache-stats", err)
		return
	}
	st := CacheStats{ByScope: map[string]int64{}, Dirty: c.Dirty(), Worker: c.Worker(), Cluster: c.Cluster()}
	st.EntriesInMemory, st.BytesInMemory = c.MemStats()
	for _, e := range list {
		st.EntriesInDB++
		st.BytesInDB += e.SizeBytes
		st.ByScope[string(e.Scope)]++
	}
	writeJSON(w, http.StatusOK, st)
}
