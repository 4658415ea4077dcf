// The drain gate: one drain at a time, and a way to wait for the end of
// the drain running now.

package owner

import "sync"

// drainGate admits one drain at a time, and tells whoever asks (end) when
// the drain running now, or the next one, ends.
type drainGate struct {
	mu    sync.Mutex // held by the running drain
	endMu sync.Mutex
	ended chan struct{} // closed at the next unlock; nil until asked for
}

func (g *drainGate) lock()         { g.mu.Lock() }
func (g *drainGate) tryLock() bool { return g.mu.TryLock() }

// unlock ends a drain: it lets the next in, then wakes who waits on end.
// In that order a woken waiter that finds the gate locked knows that a
// drain started after the one it waited for ended, and that drain lists
// incoming/ afresh. Both happen under endMu, so that end, asked while the
// next drain runs, never hands out the channel of the one that ended.
func (g *drainGate) unlock() {
	g.endMu.Lock()
	defer g.endMu.Unlock()
	ended := g.ended
	g.ended = nil
	g.mu.Unlock()
	if ended != nil {
		close(ended)
	}
}

// end returns a channel closed when the running drain ends, or the next
// one when none runs.
func (g *drainGate) end() <-chan struct{} {
	g.endMu.Lock()
	defer g.endMu.Unlock()
	if g.ended == nil {
		g.ended = make(chan struct{})
	}
	return g.ended
}
