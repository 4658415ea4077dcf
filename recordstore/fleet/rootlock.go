// The root lock: an flock on the root folder itself, held shared by an
// open from its identity read to the end of its owner election's open, and
// exclusive by a delete while it removes a store. So a delete in another
// process never runs between an open's check that the store is there and
// the moment the store is open: before that moment the engine (the owner
// election creating the lock file, the spool, or on its eager path the
// live file itself) would bring the deleted store back. Once a store is
// open its owner election checks the live file itself (owner.LiveChecker),
// so a delete after that moment leaves the open store gone, never
// recreated. The lock is on the folder: no file is created in the root.

package fleet

import (
	"context"
	"fmt"
	"time"
)

// lockRoot takes the root lock, shared or exclusive, waiting (polling,
// since flock has no deadline) until ctx ends. unlock lets it go.
func (f *Fleet) lockRoot(ctx context.Context, exclusive bool) (unlock func(), err error) {
	delay := time.Millisecond
	for {
		unlock, busy, err := lockDir(f.root, exclusive)
		if err != nil {
			return nil, fmt.Errorf("lock the fleet root %s: %w", f.root, err)
		}
		if !busy {
			return unlock, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("wait for the fleet root lock of %s: %w", f.root, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
}
