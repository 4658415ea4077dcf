package debugapi

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// The 422 messages.
const (
	MsgRequired = "Field required"
	MsgInteger  = "Input should be a valid integer"
)

// traceWhere matches the event at (partition ?1, offset ?2), the tasks
// whose task_started metadata lists it in source_offsets, and the events
// (annotations, offloads) whose metadata offsets list it. A listed
// position is an object {"partition":p,"offset":o} or a pair [p,o]. ?3 is
// the offset's decimal text: a metadata that does not contain it cannot
// list the position, so the JSON is parsed only for the rows that do.
const traceWhere = `("partition" = ?1 AND "offset" = ?2)
 OR (metadata IS NOT NULL AND instr(metadata, ?3) > 0 AND json_valid(metadata) AND EXISTS (
   SELECT 1 FROM json_each(metadata, CASE WHEN event = 'task_started' THEN '$.source_offsets' ELSE '$.offsets' END) j
   WHERE (j.type = 'object' AND json_extract(j.value, '$.partition') = ?1 AND json_extract(j.value, '$.offset') = ?2)
      OR (j.type = 'array' AND json_extract(j.value, '$[0]') = ?1 AND json_extract(j.value, '$[1]') = ?2)))`

// traceFile is one file a trace searches.
type traceFile struct {
	path      string
	worker    string
	immutable bool
}

// intParam reads a query parameter as an int64: ok false after writing 422.
func intParam(w http.ResponseWriter, r *http.Request, name string, required bool, def int64) (int64, bool) {
	v, has := r.URL.Query()[name]
	if !has || len(v) == 0 || v[len(v)-1] == "" {
		if required {
			write422(w, name, MsgRequired)
			return 0, false
		}
		return def, true
	}
	n, err := strconv.ParseInt(v[len(v)-1], 10, 64)
	if err != nil {
		write422(w, name, MsgInteger)
		return 0, false
	}
	return n, true
}

// traceAnswer is the body of the trace routes.
type traceAnswer struct {
	Events        []map[string]any `json:"events"`
	FilesSearched int              `json:"files_searched"`
	// Truncated is true when history_max_files or history_max_seconds
	// stopped the search before the last file.
	Truncated bool `json:"truncated"`
}

// trace serves GET /api/v1/debug/trace?partition=&offset=[&history=1].
func (s *server) trace(w http.ResponseWriter, r *http.Request) {
	part, ok := intParam(w, r, "partition", true, 0)
	if !ok {
		return
	}
	off, ok := intParam(w, r, "offset", true, 0)
	if !ok {
		return
	}
	hist := r.URL.Query().Get("history")
	if hist != "" && hist != "0" && hist != "1" && hist != "true" && hist != "false" {
		write422(w, "history", "Input should be a valid boolean")
		return
	}
	var files []traceFile
	if hist == "1" || hist == "true" {
		files = s.historyFiles()
	} else {
		files = s.ownTraceFiles()
	}
	ans := traceAnswer{Events: []map[string]any{}}
	deadline := s.now().Add(s.opts.Config.TraceHistoryMaxSeconds)
	var found [][]map[string]any
	for i, f := range files {
		if f.immutable && (i >= s.opts.Config.TraceHistoryMaxFiles || !s.now().Before(deadline)) {
			ans.Truncated = true
			break
		}
		rows, err := s.searchFile(r.Context(), f, `SELECT `+eventSelect+` FROM events WHERE `+traceWhere+` ORDER BY id`, part, off, strconv.FormatInt(off, 10))
		if err != nil {
			s.log.Warn("debugapi_trace_file_failed", "file", f.path, "err", err)
		}
		ans.FilesSearched++
		found = append(found, rows)
	}
	// Files were searched newest first; the answer lists them oldest first.
	for i := len(found) - 1; i >= 0; i-- {
		ans.Events = append(ans.Events, found[i]...)
	}
	writeJSON(w, http.StatusOK, ans)
}

// searchFile runs query on one file.
func (s *server) searchFile(ctx context.Context, f traceFile, query string, args ...any) ([]map[string]any, error) {
	db, err := openRO(f.path, f.immutable)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return queryRows(ctx, db, f.worker, query, args...)
}

// ownTraceFiles is the live file then the own closed files, newest first.
func (s *server) ownTraceFiles() []traceFile {
	rec := s.opts.Recorder
	if rec == nil || s.opts.Config.StorageDir == "" {
		return nil
	}
	var out []traceFile
	if live := rec.LiveFile(); live != "" {
		out = append(out, traceFile{path: live, worker: s.opts.Config.WorkerName})
	}
	closed := rec.OwnClosedFiles()
	for i := len(closed) - 1; i >= 0; i-- {
		out = append(out, traceFile{path: closed[i], worker: s.opts.Config.WorkerName})
	}
	return out
}

// historyFiles lists the sealed files of the own cluster's history folder,
// newest first (by the time in their names, then by name).
func (s *server) historyFiles() []traceFile {
	shared := s.opts.Config.shared()
	if shared == "" {
		return nil
	}
	dir := dbfiles.HistoryDir(shared, s.opts.Config.ClusterName)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type cand struct {
		name string
		at   time.Time
	}
	var cs []cand
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !safeSegment(n) || !strings.HasSuffix(n, ".db") {
			continue
		}
		at, _ := archive.FileStart(n)
		cs = append(cs, cand{n, at})
	}
	sort.Slice(cs, func(i, j int) bool {
		if !cs[i].at.Equal(cs[j].at) {
			return cs[i].at.After(cs[j].at)
		}
		return cs[i].name > cs[j].name
	})
	out := make([]traceFile, 0, len(cs))
	for _, c := range cs {
		worker := strings.TrimSuffix(c.name, ".db")
		if m, err := dbfiles.ReadMeta(filepath.Join(dir, dbfiles.MetaFileName(c.name))); err == nil && m.Worker != "" {
			worker = m.Worker
		}
		out = append(out, traceFile{path: filepath.Join(dir, c.name), worker: worker, immutable: true})
	}
	return out
}

// liveDB opens the live file read-only; nil when there is none.
func (s *server) liveDB() (*sql.DB, error) {
	if s.opts.Recorder == nil || s.opts.Config.StorageDir == "" {
		return nil, nil
	}
	live := s.opts.Recorder.LiveFile()
	if live == "" {
		return nil, nil
	}
	return openRO(live, false)
}

// traceByLabel serves GET /api/v1/debug/trace-by-label?key=&value= over
// the live file.
func (s *server) traceByLabel(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, p := range []string{"key", "value"} {
		if _, has := q[p]; !has {
			write422(w, p, MsgRequired)
			return
		}
	}
	ans := traceAnswer{Events: []map[string]any{}}
	db, err := s.liveDB()
	if err != nil {
		s.internal(w, "trace-by-label", err)
		return
	}
	if db != nil {
		defer db.Close()
		rows, err := queryRows(r.Context(), db, s.opts.Config.WorkerName,
			`SELECT `+eventSelect+` FROM events WHERE labels IS NOT NULL AND json_valid(labels) AND EXISTS (
			   SELECT 1 FROM json_each(labels) j WHERE j.key = ? AND CAST(j.value AS TEXT) = ?) ORDER BY id`,
			q.Get("key"), q.Get("value"))
		if err != nil {
			s.internal(w, "trace-by-label", err)
			return
		}
		ans.Events = append(ans.Events, rows...)
		ans.FilesSearched = 1
	}
	writeJSON(w, http.StatusOK, ans)
}

// labelKeys serves GET /api/v1/debug/label-keys: the sorted distinct label
// keys of the live file.
func (s *server) labelKeys(w http.ResponseWriter, r *http.Request) {
	keys := []string{}
	db, err := s.liveDB()
	if err != nil {
		s.internal(w, "label-keys", err)
		return
	}
	if db != nil {
		defer db.Close()
		rows, err := db.QueryContext(r.Context(), `SELECT DISTINCT j.key FROM events, json_each(events.labels) j
			WHERE events.labels IS NOT NULL AND json_valid(events.labels) ORDER BY 1`)
		if err != nil {
			s.internal(w, "label-keys", err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				s.internal(w, "label-keys", err)
				return
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil {
			s.internal(w, "label-keys", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
}
