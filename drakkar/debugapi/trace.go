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

// The trace route's headers: how many files the search read, and
// whether ui.trace.history_max_files or history_max_seconds stopped it
// before the last file ("true") or not ("false"). The body stays the
// array of rows either way.
const (
	HeaderTraceFilesSearched = "X-Drakkar-Trace-Files-Searched"
	HeaderTraceTruncated     = "X-Drakkar-Trace-Truncated"
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

// trace serves GET /api/v1/debug/trace?partition=&offset=[&history=1]: a
// JSON array of event rows; the headers HeaderTraceFilesSearched and
// HeaderTraceTruncated say how far the search went.
func (s *server) trace(w http.ResponseWriter, r *http.Request) {
	part, ok := int32Param(w, r, "partition")
	if !ok {
		return
	}
	off, ok := intParam(w, r, "offset", true, 0)
	if !ok {
		return
	}
	hist, ok := boolParam(w, r, "history")
	if !ok {
		return
	}
	var files []traceFile
	if hist {
		files = s.historyFiles()
	} else {
		files = s.ownTraceFiles()
	}
	events := []map[string]any{}
	searched, truncated := 0, false
	deadline := s.now().Add(s.opts.Config.TraceHistoryMaxSeconds)
	var found [][]map[string]any
	for i, f := range files {
		if f.immutable && (i >= s.opts.Config.TraceHistoryMaxFiles || !s.now().Before(deadline)) {
			truncated = true
			break
		}
		rows, err := s.searchFile(r.Context(), f, `SELECT `+eventSelect+` FROM events WHERE `+traceWhere+` ORDER BY id`, part, off, strconv.FormatInt(off, 10))
		if err != nil {
			s.log.Warn("debugapi_trace_file_failed", "file", f.path, "err", err)
		}
		searched++
		found = append(found, rows)
	}
	// Files were searched newest first; the answer lists them oldest first.
	for i := len(found) - 1; i >= 0; i-- {
		events = append(events, found[i]...)
	}
	w.Header().Set(HeaderTraceFilesSearched, strconv.Itoa(searched))
	w.Header().Set(HeaderTraceTruncated, strconv.FormatBool(truncated))
	writeJSON(w, http.StatusOK, events)
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
	key, ok := textParam(w, r, "key")
	if !ok {
		return
	}
	value, ok := textParam(w, r, "value")
	if !ok {
		return
	}
	events := []map[string]any{}
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
			key, value)
		if err != nil {
			s.internal(w, "trace-by-label", err)
			return
		}
		events = append(events, rows...)
	}
	writeJSON(w, http.StatusOK, events)
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
	writeJSON(w, http.StatusOK, keys)
}
