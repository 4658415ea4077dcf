// What the recorder shows of its own state: the backlog and why each file
// is there, the last seal outcome and the next rotation time.

package recorder

import (
	"sync"
	"time"
)

// SealOutcome is the outcome of the last seal and move of a closed file.
type SealOutcome struct {
	// Path is the file in storage.dir.
	Path string `json:"path"`
	// OK says it was sealed and moved into the history folder.
	OK bool `json:"ok"`
	// Destination is where it went when OK.
	Destination string `json:"destination,omitempty"`
	// Stage is the step that failed when not OK: "seal", "publish" or
	// "quarantine".
	Stage string `json:"stage,omitempty"`
	// Error is why it failed; "" when OK.
	Error string `json:"error,omitempty"`
	// At is when it happened (UTC).
	At time.Time `json:"at"`
}

// Status is what Recorder.Status reports.
type Status struct {
	// Owner says this process owns the worker's recorder; only the owner
	// rotates, seals and keeps a backlog.
	Owner bool `json:"owner"`
	// LiveFile is the live file ("" when not the owner).
	LiveFile string `json:"live_file"`
	// Backlog is every closed file not yet in the history folder, oldest
	// first, with why it is there.
	Backlog []BacklogFile `json:"backlog"`
	// LastSeal is the last seal-and-move outcome; nil before the first.
	LastSeal *SealOutcome `json:"last_seal"`
	// NextRotation is when the rotation tick is next due; nil before the
	// recorder's jobs started (memory-only mode).
	NextRotation *time.Time `json:"next_rotation"`
}

// statusState is the recorder's status fields that no other lock guards.
type statusState struct {
	mu           sync.Mutex
	lastSeal     *SealOutcome
	nextRotation time.Time
}

func (s *statusState) setSeal(o SealOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSeal = &o
}

func (s *statusState) setNextRotation(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextRotation = t.UTC()
}

// Status reports the recorder's state now. It reads memory only.
func (r *Recorder) Status() Status {
	st := Status{Owner: r.Owner(), LiveFile: r.LiveFile(), Backlog: r.Backlog()}
	r.status.mu.Lock()
	defer r.status.mu.Unlock()
	if r.status.lastSeal != nil {
		o := *r.status.lastSeal
		st.LastSeal = &o
	}
	if !r.status.nextRotation.IsZero() {
		t := r.status.nextRotation
		st.NextRotation = &t
	}
	return st
}
