// Windows: [k·W, (k+1)·W) in UTC epoch seconds, keyed by the start time in
// a sealed file's name, and when a window is due.

package archive

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// Window is one archive window [From, To) in UTC.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// WindowOf returns the window of width w (a whole number of seconds, more
// than 0) holding t: [k·w, (k+1)·w) in UTC epoch seconds, k = ⌊t/w⌋, so a
// time before 1970 falls in a window of negative k, not in window 0.
func WindowOf(t time.Time, w time.Duration) Window {
	sec := int64(w / time.Second)
	s := t.Unix()
	k := s / sec
	if s%sec != 0 && s < 0 {
		k--
	}
	from := time.Unix(k*sec, 0).UTC()
	return Window{From: from, To: from.Add(time.Duration(sec) * time.Second)}
}

// Due reports whether the window is due at now: at least dueAfter has
// passed since it ended (the exact second To+dueAfter is due).
func (w Window) Due(now time.Time, dueAfter time.Duration) bool {
	return !now.Before(w.To.Add(dueAfter))
}

// ArchiveName is the window's archive in the history folder of cluster:
// <cluster>-<from>__<to>.db.gz.
func (w Window) ArchiveName(cluster string) string {
	return dbfiles.ArchiveName(cluster, w.From, w.To)
}

// recorderSuffixLen is the length of "-YYYY-MM-DD__HH_MM_SS.db".
const recorderSuffixLen = 1 + len(dbfiles.RecorderTimeLayout) + len(dbfiles.DBSuffix)

// FileStart returns the start time in the name of a sealed recorder file,
// <worker>-<YYYY-MM-DD__HH_MM_SS>.db, whatever the worker (a worker name
// may hold dashes: the time is the fixed-length tail). It is false for any
// other name: a dot-prefixed work file, an archive, a meta file, an
// impossible date (2026-02-30), an empty worker name.
func FileStart(name string) (time.Time, bool) {
	name = filepath.Base(name)
	if strings.HasPrefix(name, ".") || len(name) <= recorderSuffixLen {
		return time.Time{}, false
	}
	worker := name[:len(name)-recorderSuffixLen]
	return dbfiles.ParseRecorderFileName(worker, name)
}

// HistoryDir is the history folder of cluster in shared:
// <shared>/history/<sanitized cluster>.
func HistoryDir(shared, cluster string) string { return dbfiles.HistoryDir(shared, cluster) }
