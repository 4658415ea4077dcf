// Events of a pass, for callers and tests that follow what a pass does
// without parsing its log.

package archive

import "time"

// Kinds of Event.
const (
	EventLocked        = "locked"          // the pass took the lock (Name: "")
	EventTakenOver     = "taken_over"      // it took over a stale lock (Name: the old token)
	EventPutBackFailed = "put_back_failed" // a fresh lock moved aside could not be put back
	EventFenced        = "fenced"          // the lock no longer holds our token
	EventMerged        = "merged"          // a window's merge output is complete, before the gzip (Name: archive)
	EventPublished     = "published"       // an archive is durable at its final name (Name: archive)
	EventDeleted       = "deleted"         // a merged or covered source was deleted (Name: source)
	EventSetAside      = "set_aside"       // an unreadable source was renamed <name>.unreadable
	EventSwept         = "swept"           // a work file was swept (Name: file)
	EventExpired       = "expired"         // an archive was expired
	EventPruned        = "pruned"          // a merge result was pruned
	EventWindowFailed  = "window_failed"   // a window failed (Name: archive)
	EventReleased      = "released"        // the pass ended (At: just before the lock was deleted); Fenced says whether it still held it
)

// Event is one step of a pass, given to Options.OnEvent on the pass's
// goroutine (or the lock's, for a takeover).
type Event struct {
	Kind string `json:"kind"`
	// Name is the file (base name) or token the event is about.
	Name string `json:"name,omitempty"`
	// Token is the pass's lock token.
	Token string `json:"token"`
	// Archive is the archive a deleted source is covered by.
	Archive string `json:"archive,omitempty"`
	// Fenced is set on EventReleased for a pass that lost the lock.
	Fenced bool `json:"fenced,omitempty"`
	// At is this host's clock when the event happened (for ordering the
	// events of processes on one host in tests; never compared across
	// hosts).
	At time.Time `json:"at"`
}
