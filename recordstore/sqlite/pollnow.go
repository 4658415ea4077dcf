// PollChanges: a read-only backend's change feed polled at once, when the
// owner told this process that it committed (the owner package's push).

package sqlite

import "time"

// PollChanges has a read-only backend's change feed poll now rather than
// at its next interval: when it finds that the live file changed, it
// refreshes the catalog and wakes every follower, as each poll does. It
// returns at once (the poll runs on the feed's own goroutine; one already
// running is followed by another right after it). It does nothing on a
// writable backend, whose own commits wake its followers, and on one
// whose feed is not running (closed, or promoted).
func (b *Backend) PollChanges() {
	b.bg.Lock()
	f := b.bg.feed
	b.bg.Unlock()
	if f != nil {
		f.kick()
	}
}

// kick runs the next poll now: the timer is moved to fire at once when it
// was still waiting; when it has fired already (a poll is about to run or
// runs), that poll is followed by another at once.
func (f *feedHandle) kick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return
	}
	if !f.running && f.timer.Stop() {
		f.timer.Reset(0)
		return
	}
	f.again = true
}

// PushedIntervals is how many ChangeIntervals the change feed waits
// between polls while SetPushed(true) holds.
const PushedIntervals = 10

// SetPushed tells a read-only backend whether the owner's commit notices
// reach it (the owner package's push): while they do, each one calls
// PollChanges, and the feed polls on its own only every PushedIntervals
// ChangeIntervals, as a safety net (a commit nobody announces — a writer
// outside the owner — is then seen within that). Set back to false, the
// feed polls at once and every ChangeInterval again.
func (b *Backend) SetPushed(on bool) {
	if b.pushed.Swap(on) && !on {
		b.PollChanges()
	}
}

// feedInterval is the change feed's wait between two polls.
func (b *Backend) feedInterval() time.Duration {
	if b.pushed.Load() {
		return PushedIntervals * b.opts.ChangeInterval
	}
	return b.opts.ChangeInterval
}
