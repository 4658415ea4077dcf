// What the pull shows of each peer: its cursor and its last outcome.

package cache

import (
	"sort"
	"time"

	"github.com/fb46ecde/records/drakkar/registry"
)

// PeerStatus is where the pull of one peer stands.
type PeerStatus struct {
	// Worker and URL are the peer's, from its registry card.
	Worker string `json:"worker"`
	URL    string `json:"url"`
	// Cursor is the last entry applied from the peer (nil: none yet, or
	// the peer restarted and is pulled from the start).
	Cursor *Cursor `json:"cursor"`
	// LastPull is when the pull last looked at the peer (UTC).
	LastPull time.Time `json:"last_pull"`
	// Asked says the last look asked the peer (a mark was past the
	// cursor); Rows counts what that pull applied; OK says it ran to
	// the end.
	Asked bool `json:"asked"`
	Rows  int  `json:"rows"`
	OK    bool `json:"ok"`
	// LastError is why the latest failed pull of the peer stopped early
	// (kept after later pulls succeed; see OK); "" when none failed.
	LastError string `json:"last_error,omitempty"`
	// LastErrorAt is when the last failure happened; nil when none yet.
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// peerLast is the last pull of one peer.
type peerLast struct {
	url     string
	at      time.Time
	asked   bool
	rows    int
	ok      bool
	err     string
	errAt   time.Time
	hasErrs bool
}

// note records the outcome of one peer's pull.
func (pl *puller) note(p registry.Peer, res PeerResult) {
	now := time.Now().UTC()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	l := pl.last[p.Worker]
	l.url, l.at, l.asked, l.rows, l.ok = p.URL, now, res.Asked, res.Rows, res.Err == nil
	if res.Err != nil {
		l.err, l.errAt, l.hasErrs = res.Err.Error(), now, true
	}
	pl.last[p.Worker] = l
}

// Peers reports the pull of every peer it has looked at, by worker name.
// It reads memory only; empty when the pull never ran.
func (c *Cache) Peers() []PeerStatus {
	if c.pull == nil {
		return []PeerStatus{}
	}
	pl := c.pull
	pl.mu.Lock()
	defer pl.mu.Unlock()
	out := make([]PeerStatus, 0, len(pl.last))
	for w, l := range pl.last {
		ps := PeerStatus{Worker: w, URL: l.url, LastPull: l.at, Asked: l.asked, Rows: l.rows, OK: l.ok, LastError: l.err}
		if pc, ok := pl.cursor[w]; ok {
			cur := pc.cur
			ps.Cursor = &cur
		}
		if l.hasErrs {
			at := l.errAt
			ps.LastErrorAt = &at
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Worker < out[j].Worker })
	return out
}
