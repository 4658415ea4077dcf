// Promotion timing: how fast a standby notices that the owner is gone,
// and what each step of its promotion costs (Events.Promoted).

package owner

import (
	"net"
	"os"
	"time"
)

// promoteFastRetry and promoteFastTries: after the owner's subscription
// ended (see push.go) the promoter tries the lock every promoteFastRetry,
// promoteFastTries times, before it goes back to every promoteRetry. The
// kernel releases a dead process's lock and closes its connections in the
// same exit, in no fixed order, so the first try may come a little early.
const (
	promoteFastRetry = time.Millisecond
	promoteFastTries = 100
)

// promotePushedRetry is how often the promoter tries the lock while this
// process is subscribed to the owner's notices: the subscription's end is
// what tells it the owner is gone, so the polling is only a safety net,
// and a store with hundreds of followers is spared their thousands of
// tries a second.
const promotePushedRetry = 200 * time.Millisecond

// promoterPause waits before the promoter's next try of the lock:
// promoteRetry (promotePushedRetry while subscribed to the owner's
// notices), or promoteFastRetry while *fast counts tries left; a kick
// from the subscriber (the owner's connection ended) ends the wait at once
// and starts promoteFastTries fast tries. It reports false once the store
// closed.
func (s *Store[T]) promoterPause(fast *int) bool {
	d := promoteRetry
	if s.push.wakeMode() == WakePush {
		d = promotePushedRetry
	}
	if *fast > 0 {
		*fast--
		d = promoteFastRetry
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return true
	case <-s.push.kick():
		*fast = promoteFastTries
		return true
	}
}

// Promotion is what Events.Promoted reports of one promotion of a
// non-owner (not of an owner elected at Open).
type Promotion struct {
	// Epoch is the new writer epoch.
	Epoch int64
	// Locked is when the promotion began, just after the lock was taken.
	Locked time.Time
	// Phases are the promotion's steps, in order, each with its duration:
	// "check live" (the live file is still the store's), "state starting"
	// (the state file written), "backend" (the backend made writable: a
	// new epoch committed), "socket" (the control socket bound), "state
	// ready" and "role" (Events.Role called).
	Phases []PromotionPhase
}

// PromotionPhase is one step of a Promotion.
type PromotionPhase struct {
	Name string
	Took time.Duration
}

// promotionClock times the phases of one promotion; a nil clock (an
// owner elected at Open) times nothing.
type promotionClock struct {
	p    Promotion
	last time.Time
}

func newPromotionClock() *promotionClock {
	now := time.Now()
	return &promotionClock{p: Promotion{Locked: now}, last: now}
}

// mark ends the phase named name.
func (c *promotionClock) mark(name string) {
	if c == nil {
		return
	}
	now := time.Now()
	c.p.Phases = append(c.p.Phases, PromotionPhase{Name: name, Took: now.Sub(c.last)})
	c.last = now
}

// takeOverSocket removes the socket file of the previous owner prev (the
// state file's before this promotion) when that owner's process still
// listens on it. This process holds the lock, so prev no longer does:
// it is dying — the kernel releases a killed process's lock before it
// closes its other descriptors (see lockFDFloor) — and its listener
// accepts connections nobody will answer. Without this, listenControl
// would take it for a live program and the promotion would serve a second
// later. A socket served by any other process (SO_PEERCRED, Linux only)
// is left alone, for listenControl to refuse.
func (s *Store[T]) takeOverSocket(prev State) {
	if prev.PID == 0 || prev.PID == os.Getpid() || prev.Socket != s.paths.Socket || !sameHost(prev.Host) {
		return
	}
	c, err := net.DialTimeout("unix", s.paths.Socket, 200*time.Millisecond)
	if err != nil {
		return // nobody listens: listenControl replaces the file
	}
	pid, ok := peerPID(c)
	_ = c.Close()
	if !ok || pid != prev.PID {
		return
	}
	if err := os.Remove(s.paths.Socket); err == nil {
		s.log.Debug("took over the socket of the previous owner, still exiting", "pid", pid)
	}
}
