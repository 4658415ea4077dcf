package debugapi

import "net/http"

// RowsRead is how many event rows the own-file statistics of h, a handler
// New returned, have read.
func RowsRead(h http.Handler) int64 {
	s := h.(*apiHandler).s
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	return s.stats.reads
}
