// Clock: the settable fake clock the suite hands to every backend, so
// retention, expiry and timestamps are deterministic.

package recordstoretest

import (
	"sync"
	"time"
)

// ClockStart is where every spec's clock starts: a UTC instant with a
// non-zero microsecond part, so a backend that keeps only milliseconds or
// seconds shows up in the timestamp checks.
var ClockStart = time.Date(2030, time.January, 2, 3, 4, 5, 678901000, time.UTC)

// Clock is a fake clock. Its zero value reads ClockStart. It is safe for
// concurrent use; pass its Now method to the backend as its time source.
type Clock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu; zero means ClockStart
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock {
	return &Clock{now: t}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.now.IsZero() {
		c.now = ClockStart
	}
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative) and
// returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.nowLocked().Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
