// The last outcome of a pass per history folder, kept in memory for the
// worker's status.

package archive

import (
	"path/filepath"
	"sync"
	"time"
)

// Outcome is the last pass over a history folder in this process.
type Outcome struct {
	// Report is what the pass did.
	Report Report `json:"report"`
	// Error is the pass's error ("" when none); a window that failed is
	// in Report.Failed, and Report.Err() says so here too.
	Error string `json:"error,omitempty"`
	// At is when the pass ended (UTC).
	At time.Time `json:"at"`
}

var (
	lastMu sync.Mutex
	last   = map[string]Outcome{}
)

// keepOutcome records the outcome of a pass over folder.
func keepOutcome(folder string, rep Report, err error) {
	if err == nil {
		err = rep.Err()
	}
	o := Outcome{Report: rep, At: time.Now().UTC()}
	if err != nil {
		o.Error = err.Error()
	}
	lastMu.Lock()
	defer lastMu.Unlock()
	last[filepath.Clean(folder)] = o
}

// LastOutcome returns the outcome of the last pass this process ran over
// the history folder (HistoryDir(shared, cluster)); false when it ran
// none. It reads memory only.
func LastOutcome(folder string) (Outcome, bool) {
	lastMu.Lock()
	defer lastMu.Unlock()
	o, ok := last[filepath.Clean(folder)]
	return o, ok
}
