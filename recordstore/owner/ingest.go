// The owner's ingest loop: drain incoming/ oldest first, when poked or
// polled, one group at a time. Picking a group (pick.go), decoding it
// (decode.go), keeping each producer's order (order.go), committing or
// failing (commit.go) and retrying (retry.go) have files of their own.

package owner

import (
	"context"
	"errors"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// ingestLoop drains at start, then whenever poked, polling with a backoff
// from PollMin to PollMax in between. It drains again at once only while
// incoming/ holds more than one drain took; a batch published meanwhile
// has poked it. When it has been idle for a poll period it asks the
// flusher to move applied batches out of incoming/.
func (s *Store[T]) ingestLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	delay := s.opts.PollMin
	for {
		n, more, err := s.drainOnce(ctx)
		if err != nil && ctx.Err() == nil {
			if f := s.fatal(); f != nil {
				s.log.Error("writer stopped: fsync failed; reopen the store", "error", f)
				return
			}
			if !errors.As(err, new(retryHeld)) { // retryOrFail logged it
				s.log.Warn("drain", "error", err)
			}
		}
		if n > 0 {
			delay = s.opts.PollMin
			if more {
				continue
			}
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.poke:
			delay = s.opts.PollMin
		case <-t.C:
			s.applied.request() // idle: a good moment for the Sync
			delay = nextPoll(delay, s.opts.PollMax)
		}
		t.Stop()
	}
}

// nextPoll is the ingest loop's next polling period after an idle one of
// delay: twice as long, up to max.
func nextPoll(delay, max time.Duration) time.Duration { return min(2*delay, max) }

// wake pokes the ingest loop without blocking.
func (s *Store[T]) wake() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// drainNow drains once on the caller's goroutine — the watch of incoming/
// (startWatch) or, where there is none, the control request of a producer
// that waits — when this process serves as owner and no drain is running:
// a lone batch is then applied without waiting for the ingest loop's
// goroutine to be scheduled (about a tenth of a millisecond here).
// Otherwise it pokes the loop.
func (s *Store[T]) drainNow() {
	if !s.drainIfIdle() {
		s.wake()
	}
}

// drainIfIdle is drainNow without the poke when a drain is running (or
// this process does not serve as owner); it reports whether it drained.
// When more is waiting or the drain failed it pokes the loop, which logs
// errors and backs off. The drain runs for the store's life, not for the
// caller's deadline, so that a large group is never cut short only to be
// applied again by the loop.
func (s *Store[T]) drainIfIdle() bool {
	if s.Role() != RoleOwner || !s.drain.tryLock() {
		return false
	}
	_, more, err := s.drainLocked(s.ctx)
	s.drain.unlock()
	if more || err != nil {
		s.wake()
	}
	return true
}

// finalDrain drains until nothing more can be applied or DrainOnClose ends,
// then moves what it applied out of incoming/ (see appliedSet), and
// returns how many batches it applied or failed.
func (s *Store[T]) finalDrain() (int, error) {
	return s.finalDrainWithin(s.opts.DrainOnClose)
}

// finalDrainWithin is finalDrain bounded by d instead of DrainOnClose.
func (s *Store[T]) finalDrainWithin(d time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	total := 0
	for {
		n, _, err := s.drainOnce(ctx)
		total += n
		if err != nil || n == 0 {
			return total, errors.Join(err, s.flushApplied(ctx))
		}
	}
}

// drainOnce applies one group of incoming batches, and of inline batches
// sent over the socket (addInline), and returns how many batches it
// applied or failed, and whether more wait: in incoming/, or inline.
func (s *Store[T]) drainOnce(ctx context.Context) (int, bool, error) {
	s.drain.lock()
	defer s.drain.unlock()
	return s.drainLocked(ctx)
}

// drainLocked is drainOnce for a caller that holds the drain gate.
func (s *Store[T]) drainLocked(ctx context.Context) (int, bool, error) {
	if err := s.fatal(); err != nil {
		return 0, false, err
	}
	// The applied set is read before the listing: a folder the flusher
	// moves in between is then either not listed or known as applied.
	applied := s.applied.snapshot()
	var names []spool.BatchName
	if gen := s.arrivals.Load(); !s.spoolQuiet(gen) {
		at := time.Now()
		var err error
		if names, err = s.spool.List(ctx, spool.StateIncoming); err != nil {
			s.quiet.ok = false
			return 0, false, err
		}
		s.quiet = quietSpool{ok: true, gen: gen, at: at}
		for _, n := range names {
			if !applied[n.ID] {
				s.quiet.ok = false // a drain still to come lists it again
				break
			}
		}
	}
	waiting := 0
	for _, n := range names {
		if !applied[n.ID] {
			waiting++
		}
	}
	s.setBacklog(waiting)
	group, failed, err := s.pickGroup(ctx, names, applied)
	defer closeLoaded(group)
	if err == nil {
		group = s.addInline(group, names, applied)
	}
	if err != nil || len(group) == 0 {
		return failed, waiting > failed || s.inline.pending(), err
	}
	n, err := s.commitGroup(ctx, group)
	return n + failed, waiting > n+failed || s.inline.pending(), err
}

func (s *Store[T]) setBacklog(n int) {
	s.mu.Lock()
	s.mu.backlog = n
	s.mu.Unlock()
}
