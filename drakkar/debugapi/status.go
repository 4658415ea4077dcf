// GET /api/v1/debug/status (our extension): what a worker is doing, from
// memory only — the recorder's backlog and why each file is in it, the
// last seal and archive outcomes, each peer's pull cursor and last error,
// the next rotation time.

package debugapi

import (
	"net/http"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
)

// StatusPath is the status route's path.
const StatusPath = "/api/v1/debug/status"

// Status is the status route's 200 body.
type Status struct {
	Worker  string `json:"worker"`
	Cluster string `json:"cluster"`
	// Recorder is the recorder's state; nil in memory-only mode.
	Recorder *recorder.Status `json:"recorder"`
	// Archive is the cluster's history folder and this process's last
	// pass over it; nil in memory-only mode.
	Archive *ArchiveStatus `json:"archive"`
	// Peers is the cache pull of each peer looked at; empty when the
	// cache or its exchange is off.
	Peers []cache.PeerStatus `json:"peers"`
}

// ArchiveStatus is the archive part of Status.
type ArchiveStatus struct {
	// Folder is the cluster's history folder.
	Folder string `json:"folder"`
	// Last is the last pass this process ran over it; nil when none yet
	// (no rotation tick so far, or archiving off).
	Last *archive.Outcome `json:"last"`
}

// status serves GET /api/v1/debug/status. It opens no file.
func (s *server) status(w http.ResponseWriter, _ *http.Request) {
	c := s.opts.Config
	st := Status{Worker: c.WorkerName, Cluster: c.ClusterName, Peers: []cache.PeerStatus{}}
	if s.opts.Recorder != nil {
		rs := s.opts.Recorder.Status()
		st.Recorder = &rs
	}
	if shared := c.shared(); shared != "" {
		a := &ArchiveStatus{Folder: dbfiles.HistoryDir(shared, c.ClusterName)}
		if o, ok := archive.LastOutcome(a.Folder); ok {
			a.Last = &o
		}
		st.Archive = a
	}
	if s.opts.Cache != nil {
		st.Peers = s.opts.Cache.Peers()
	}
	writeJSON(w, http.StatusOK, st)
}
