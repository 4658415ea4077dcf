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

// SetBeforeOpen sets the hook run between a path's check and its open.
func SetBeforeOpen(f func(rel string)) { testHookBeforeOpen = f }

// SetAfterMerge sets the hook run after the merge engine returned.
func SetAfterMerge(f func()) { testHookAfterMerge = f }
