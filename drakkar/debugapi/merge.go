package debugapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/merge"
)

// MaxMergeBody is the largest merge request body read; a longer one is
// answered 400 Invalid JSON body without being read further.
const MaxMergeBody = 1 << 20

// testHookAfterMerge, when set (tests), runs after the merge engine
// returned and before the sources are checked again.
var testHookAfterMerge func()

// mergeRequest is POST /api/v1/debug/merge's body.
type mergeRequest struct {
	Filenames []string `json:"filenames"`
}

// mergeAnswer is the merge route's 200 body.
type mergeAnswer struct {
	Filename    string   `json:"filename"`
	Path        string   `json:"path"`
	WorkerCount int64    `json:"worker_count"`
	EventCount  int64    `json:"event_count"`
	StateCount  int64    `json:"state_count"`
	ClusterName *string  `json:"cluster_name"`
	SourceFiles []string `json:"source_files"`
}

// merge serves POST /api/v1/debug/merge. On success the result is at
// merged/<name> (complete: written to a temp file and renamed); on any
// failure nothing is left in merged/ but the folder itself.
func (s *server) merge(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Config.MergeEnabled {
		writeError(w, http.StatusForbidden, TextMergeDisabled)
		return
	}
	shared := s.opts.Config.shared()
	if shared == "" {
		writeError(w, http.StatusNotFound, "No storage: merge is off in memory-only mode")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMergeBody))
	var req mergeRequest
	if err != nil || json.Unmarshal(body, &req) != nil {
		writeError(w, http.StatusBadRequest, TextInvalidJSON)
		return
	}
	if len(req.Filenames) < 2 {
		writeError(w, http.StatusBadRequest, TextSelectTwo)
		return
	}
	seen := map[string]bool{}
	for _, fn := range req.Filenames {
		kind, err := classify(fn)
		if err != nil || kind == KindArchive || seen[fn] || unsafeChars(fn) {
			writeError(w, http.StatusBadRequest, "Invalid filename: "+fn)
			return
		}
		seen[fn] = true
	}
	// Each source is opened by descriptor (no symlink followed) and kept
	// open through the merge; the merge engine reads it by path, so the
	// path is checked again afterwards to name the same file (a file
	// swapped meanwhile discards the result).
	sources := make([]string, 0, len(req.Filenames))
	held := make([]*os.File, 0, len(req.Filenames))
	defer func() {
		for _, f := range held {
			_ = f.Close()
		}
	}()
	for _, fn := range req.Filenames {
		f, err := openShared(shared, fn)
		if err != nil {
			writeError(w, http.StatusNotFound, "File not found: "+fn)
			return
		}
		held = append(held, f)
		sources = append(sources, filepath.Join(shared, filepath.FromSlash(fn)))
	}
	dir := dbfiles.MergedDir(shared)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		s.mergeFailed(w, fmt.Errorf("create %s: %w", dir, err))
		return
	}
	name := dbfiles.MergedName(s.now(), dbfiles.NewHex16())
	res, err := merge.Merge(r.Context(), filepath.Join(dir, name), sources, merge.Options{Logger: s.log})
	if err != nil {
		s.mergeFailed(w, err)
		return
	}
	if testHookAfterMerge != nil {
		testHookAfterMerge()
	}
	for i, f := range held {
		if !samePath(f, sources[i]) {
			_ = os.Remove(res.Out)
			writeError(w, http.StatusNotFound, "File not found: "+req.Filenames[i])
			return
		}
	}
	ans := mergeAnswer{Filename: name, Path: "merged/" + name, WorkerCount: res.Workers,
		EventCount: res.Events, StateCount: res.States, SourceFiles: []string{}}
	if res.Cluster != "" {
		ans.ClusterName = &res.Cluster
	}
	for i, sr := range res.Sources {
		if sr.Status != merge.StatusSkipped {
			ans.SourceFiles = append(ans.SourceFiles, req.Filenames[i])
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

func (s *server) mergeFailed(w http.ResponseWriter, err error) {
	s.log.Error("debugapi_merge_failed", "err", err)
	writeError(w, http.StatusInternalServerError, "Merge failed: "+err.Error())
}

// samePath reports whether path, not followed, is still the regular file
// f was opened as.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && b.Mode().IsRegular() && os.SameFile(a, b)
}
