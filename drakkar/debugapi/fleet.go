package debugapi

import (
	"net/http"
	"sort"

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

// workers serves GET /api/v1/workers from the registry's last snapshot:
// the workers of this worker's cluster first, then the others, each group
// by name. Without a registry it lists this worker alone.
func (s *server) workers(w http.ResponseWriter, _ *http.Request) {
	out := []WorkerItem{}
	c := s.opts.Config
	if reg := s.opts.Registry; reg != nil {
		for _, p := range reg.Peers() {
			out = append(out, WorkerItem{WorkerName: p.Worker, ClusterName: p.Cluster, URL: p.URL,
				IsCurrent: p.Instance == reg.Instance(), LastSeenTS: dbfiles.TS(p.LastSeen), Online: p.Online})
		}
	}
	current := false
	for _, it := range out {
		current = current || it.IsCurrent
	}
	if !current {
		out = append(out, WorkerItem{WorkerName: c.WorkerName, ClusterName: c.ClusterName, URL: c.URL,
			IsCurrent: true, LastSeenTS: dbfiles.TS(s.now()), Online: true})
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

// cacheEntries serves GET /api/v1/debug/cache/entries: every entry, by key.
func (s *server) cacheEntries(w http.ResponseWriter, r *http.Request) {
	c := s.cacheOn(w)
	if c == nil {
		return
	}
	list, err := c.List(r.Context())
	if err != nil {
		s.internal(w, "cache-entries", err)
		return
	}
	if list == nil {
		list = []cache.Entry{}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
	writeJSON(w, http.StatusOK, map[string]any{"entries": list})
}

// TextCacheEntryNotFound is the 404 text of a missing cache key.
const TextCacheEntryNotFound = "Cache entry not found"

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
	writeJSON(w, http.StatusOK, e)
}

// CacheStats is GET /api/v1/debug/cache/stats's body.
type CacheStats struct {
	Entries   int64            `json:"entries"`
	SizeBytes int64            `json:"size_bytes"`
	ByScope   map[string]int64 `json:"by_scope"`
	Dirty     int              `json:"dirty"`
	Worker    string           `json:"worker"`
	Cluster   string           `json:"cluster"`
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
	for _, e := range list {
		st.Entries++
		st.SizeBytes += e.SizeBytes
		st.ByScope[string(e.Scope)]++
	}
	writeJSON(w, http.StatusOK, st)
}
