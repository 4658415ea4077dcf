// Moving applied batches out of incoming/: a batch's folder is its durable
// copy until the backend's Sync has made its commit survive a power loss,
// so folders leave in bulk, after one Sync, on a goroutine of their own.

package owner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// Applied batches are flushed (Sync, then moved to trash/) when the ingest
// loop has been idle for a poll period, flushAge after the oldest was
// applied, or once flushCount are waiting — whichever comes first. The
// count keeps incoming/, which every drain lists, short.
const (
	flushAge   = 250 * time.Millisecond
	flushCount = 64
)

// appliedSet holds the batches this owner committed whose folders are
// still in incoming/. It is safe for concurrent use.
type appliedSet struct {
	mu    sync.Mutex
	m     map[string]spool.BatchName // batch id → folder name
	since time.Time                  // when the oldest was added
	kick  chan struct{}              // asks the flusher to run now
}

func newAppliedSet() *appliedSet {
	return &appliedSet{m: map[string]spool.BatchName{}, kick: make(chan struct{}, 1)}
}

// add records a committed batch, asking for a flush when enough wait.
func (a *appliedSet) add(n spool.BatchName) {
	a.mu.Lock()
	if len(a.m) == 0 {
		a.since = time.Now()
	}
	a.m[n.ID] = n
	full := len(a.m) >= flushCount
	a.mu.Unlock()
	if full {
		a.request()
	}
}

// request asks the flusher to run, without blocking.
func (a *appliedSet) request() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// snapshot returns the ids in the set.
func (a *appliedSet) snapshot() map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]bool, len(a.m))
	for id := range a.m {
		out[id] = true
	}
	return out
}

// names returns the folder names in the set, oldest first.
func (a *appliedSet) names() []spool.BatchName {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]spool.BatchName, 0, len(a.m))
	for _, n := range a.m {
		out = append(out, n)
	}
	slices.SortFunc(out, func(x, y spool.BatchName) int { return strings.Compare(x.String(), y.String()) })
	return out
}

// due reports whether the oldest batch has waited flushAge.
func (a *appliedSet) due() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m) > 0 && time.Since(a.since) >= flushAge
}

func (a *appliedSet) remove(id string) {
	a.mu.Lock()
	delete(a.m, id)
	if len(a.m) == 0 {
		a.since = time.Time{}
	}
	a.mu.Unlock()
}

// flushLoop flushes applied batches while this process owns the store.
func (s *Store[T]) flushLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	t := time.NewTicker(flushAge / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.applied.kick:
		case <-t.C:
			if !s.applied.due() {
				continue
			}
		}
		if err := s.flushApplied(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("move applied batches to trash", "error", err)
		}
	}
}

// flushApplied makes the applied batches durable in the backend (Sync),
// then moves their folders to trash/. Until the Sync they stay in
// incoming/: a power loss may undo commits that were not synced (the
// backend commits without fsync), and the folders then bring the batches
// back to be applied again. A failed fsync stops the writer (setLastError
// records it as fatal). On error the batches not moved stay in the set,
// for the next flush; their folders are still in incoming/.
func (s *Store[T]) flushApplied(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	names := s.applied.names()
	if len(names) == 0 {
		return nil
	}
	if err := s.backend.Sync(ctx); err != nil {
		s.setLastError(err)
		return err
	}
	for _, n := range names {
		s.opts.Failpoint(FailBeforeTrash)
		if err := s.spool.MoveToTrash(ctx, spool.StateIncoming, n.String()); err != nil {
			if ctx.Err() == nil {
				s.setLastError(err)
			}
			return err
		}
		s.applied.remove(n.ID)
	}
	return nil
}
