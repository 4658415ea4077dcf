package debugapi

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// OwnStats is the statistics of one own file, measured on request and
// refreshed incrementally: a refresh reads only the rows whose id is past
// LastID (the events table is append-only with a monotonic id).
type OwnStats struct {
	EventCount   int64    `json:"event_count"`
	FirstEventTS *float64 `json:"first_event_ts"`
	LastEventTS  *float64 `json:"last_event_ts"`
	LastID       int64    `json:"last_id"`
}

// OwnFile is one item of the Databases page's own list.
type OwnFile struct {
	// Path is the file's name in storage.dir (own files are not
	// downloadable by path).
	Path string `json:"path"`
	Name string `json:"name"`
	// Kind is "live" or "backlog".
	Kind       string   `json:"kind"`
	SizeBytes  int64    `json:"size_bytes"`
	ModifiedAt string   `json:"modified_at"`
	Stats      OwnStats `json:"stats"`
}

// ownStats keeps the statistics of own files by path.
type ownStats struct {
	mu sync.Mutex
	by map[string]OwnStats
	// reads counts the rows read by refreshes (for tests of the
	// incremental refresh).
	reads int64
}

func newOwnStats() *ownStats { return &ownStats{by: map[string]OwnStats{}} }

// refresh brings path's statistics up to date by reading the rows past the
// last id seen, and forgets the files not in keep.
func (o *ownStats) refresh(ctx context.Context, path string) (OwnStats, error) {
	o.mu.Lock()
	st := o.by[path]
	o.mu.Unlock()
	db, err := openRO(path, false)
	if err != nil {
		return st, err
	}
	defer db.Close()
	var n int64
	var minTS, maxTS *float64
	var maxID *int64
	err = db.QueryRowContext(ctx, `SELECT count(*), min(ts), max(ts), max(id) FROM events WHERE id > ?`, st.LastID).
		Scan(&n, &minTS, &maxTS, &maxID)
	if err != nil {
		return st, err
	}
	if n > 0 {
		st.EventCount += n
		if st.FirstEventTS == nil || (minTS != nil && *minTS < *st.FirstEventTS) {
			st.FirstEventTS = minTS
		}
		if st.LastEventTS == nil || (maxTS != nil && *maxTS > *st.LastEventTS) {
			st.LastEventTS = maxTS
		}
		st.LastID = *maxID
	}
	o.mu.Lock()
	o.by[path] = st
	o.reads += n
	o.mu.Unlock()
	return st, nil
}

// forget drops the statistics of the files not in keep.
func (o *ownStats) forget(keep map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := range o.by {
		if !keep[p] {
			delete(o.by, p)
		}
	}
}

// ownFiles lists the live file and the backlog with their statistics.
func (s *server) ownFiles(ctx context.Context) []OwnFile {
	out := []OwnFile{}
	rec := s.opts.Recorder
	if rec == nil || s.opts.Config.StorageDir == "" {
		return out
	}
	type item struct{ path, kind string }
	var items []item
	if live := rec.LiveFile(); live != "" {
		items = append(items, item{live, "live"})
	}
	for _, p := range rec.OwnClosedFiles() {
		items = append(items, item{p, "backlog"})
	}
	keep := map[string]bool{}
	for _, it := range items {
		fi, err := os.Stat(it.path)
		if err != nil {
			continue // moved meanwhile
		}
		keep[it.path] = true
		st, err := s.stats.refresh(ctx, it.path)
		if err != nil {
			s.log.Warn("debugapi_own_stats_failed", "file", it.path, "err", err)
		}
		out = append(out, OwnFile{Path: filepath.Base(it.path), Name: filepath.Base(it.path), Kind: it.kind,
			SizeBytes: fi.Size(), ModifiedAt: dbfiles.FormatTime(fi.ModTime()), Stats: st})
	}
	s.stats.forget(keep)
	return out
}

// databasesAnswer is GET /api/v1/debug/databases's body.
type databasesAnswer struct {
	Own     []OwnFile   `json:"own"`
	History historyJSON `json:"history"`
}

// databases serves GET /api/v1/debug/databases. No sealed file is opened:
// the history comes from names, one stat each and the meta files.
func (s *server) databases(w http.ResponseWriter, r *http.Request) {
	ans := databasesAnswer{Own: s.ownFiles(r.Context()), History: historyJSON{Folders: []historyFolder{}}}
	if shared := s.opts.Config.shared(); shared != "" {
		h, err := s.metas.list(shared)
		if err == nil {
			ans.History, err = s.metas.encodeHistory(h)
		}
		if err != nil {
			s.internal(w, "databases", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, ans)
}
