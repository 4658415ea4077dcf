// PollChanges: a read-only backend's change feed polled at once, when the
// owner told this process that it committed (the owner package's push).

package sqlite

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
