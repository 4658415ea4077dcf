package debugapi

import "net/http"

type ownStats struct{}

func newOwnStats() *ownStats { return &ownStats{} }

func (s *server) databases(w http.ResponseWriter, r *http.Request) {
	s.internal(w, "databases", errTODO)
}
func (s *server) download(w http.ResponseWriter, r *http.Request)     { s.internal(w, "download", errTODO) }
func (s *server) downloadLive(w http.ResponseWriter, r *http.Request) { s.internal(w, "live", errTODO) }
func (s *server) merge(w http.ResponseWriter, r *http.Request)        { s.internal(w, "merge", errTODO) }
func (s *server) archives(w http.ResponseWriter, r *http.Request)     { s.internal(w, "archives", errTODO) }
func (s *server) trace(w http.ResponseWriter, r *http.Request)        { s.internal(w, "trace", errTODO) }
func (s *server) traceByLabel(w http.ResponseWriter, r *http.Request) { s.internal(w, "tbl", errTODO) }
func (s *server) labelKeys(w http.ResponseWriter, r *http.Request)    { s.internal(w, "lk", errTODO) }
func (s *server) events(w http.ResponseWriter, r *http.Request)       { s.internal(w, "events", errTODO) }
func (s *server) workers(w http.ResponseWriter, r *http.Request)      { s.internal(w, "workers", errTODO) }
func (s *server) cacheEntries(w http.ResponseWriter, r *http.Request) { s.internal(w, "ce", errTODO) }
func (s *server) cacheEntry(w http.ResponseWriter, r *http.Request)   { s.internal(w, "c", errTODO) }
func (s *server) cacheStats(w http.ResponseWriter, r *http.Request)   { s.internal(w, "cs", errTODO) }
