// The owner's periodic work: the heartbeat in the state file, spool GC and
// the ledger sweep.

package owner

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// heartbeatLoop refreshes the state file every Heartbeat.
func (s *Store[T]) heartbeatLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	t := time.NewTicker(s.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.moveStrays(ctx)
		s.refreshCounts(ctx)
		if err := s.writeState(PhaseReady); err != nil {
			s.log.Error("heartbeat", "error", err)
		}
	}
}

// refreshCounts updates the backlog and failed counts from the spool.
func (s *Store[T]) refreshCounts(ctx context.Context) {
	in, err1 := s.spool.List(ctx, spool.StateIncoming)
	failed, err2 := s.spool.List(ctx, spool.StateFailed)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err1 == nil {
		s.mu.backlog = len(in)
	}
	if err2 == nil {
		s.mu.failed = len(failed)
	}
}

// gcLoop runs spool GC and sweeps old ledger rows at start and every
// GCInterval.
func (s *Store[T]) gcLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	t := time.NewTicker(s.opts.GCInterval)
	defer t.Stop()
	for {
		s.collect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// collect is one GC pass.
func (s *Store[T]) collect(ctx context.Context) {
	res, err := s.spool.GC(ctx, s.opts.GC)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("spool gc", "error", err)
	} else if n := len(res.Tmp) + len(res.Failed) + len(res.Trash); n > 0 {
		s.log.Debug("spool gc", "removed", n)
	}
	if n, err := s.backend.SweepBatches(ctx, time.Now().Add(-s.opts.LedgerRetention)); err != nil && ctx.Err() == nil {
		s.log.Warn("ledger sweep", "error", err)
	} else if n > 0 {
		s.log.Debug("ledger sweep", "removed", n)
	}
}
