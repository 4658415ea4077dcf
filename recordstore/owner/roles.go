// Roles: becoming the owner (at open or by promotion), waiting as a
// non-owner, and leaving either role on Close.

package owner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// waitReady waits until the owner's state says ready, or until this process
// takes the lock itself (the owner went away), bounded by StartWait.
func (s *Store[T]) waitReady(ctx context.Context) (State, bool, error) {
	deadline := time.Now().Add(s.opts.StartWait)
	var last State
	for {
		if won, err := s.lock.try(); err != nil || won {
			return State{}, won, err
		}
		st, err := ReadState(s.paths.State)
		if err == nil && st.Phase == PhaseReady {
			return st, false, nil
		}
		if err == nil {
			last = st
		}
		if time.Now().After(deadline) {
			return State{}, false, fmt.Errorf("%w within %s (phase %q, pid %d)", ErrStartTimeout, s.opts.StartWait, last.Phase, last.PID)
		}
		select {
		case <-ctx.Done():
			return State{}, false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// startOwner runs the owner's start-up with the lock held: state
// starting, backend writable, socket, state ready, loops.
func (s *Store[T]) startOwner(ctx context.Context) error {
	// A previous owner killed a moment ago may still be exiting, its
	// listener still open after its lock went (see takeOverSocket).
	s.push.prev, _ = ReadState(s.paths.State)
	defer func() { s.push.prev = State{} }()
	if err := s.acquireFence(ctx); err != nil {
		return err
	}
	if err := s.writeState(PhaseStarting); err != nil {
		_ = s.releaseFence()
		return err
	}
	s.opts.Failpoint(FailDuringStarting)
	b, err := s.opts.Open(ctx, false, nil)
	if err != nil {
		_ = removeStateIfOurs(s.paths.State, s.id.Instance)
		_ = s.releaseFence()
		return err
	}
	s.backend = b
	if err := s.serveAsOwner(); err != nil {
		_ = b.Close()
		_ = removeStateIfOurs(s.paths.State, s.id.Instance)
		return err
	}
	return nil
}

// startNonOwner opens the backend read-only and starts the promoter, or,
// when the owner runs another catalog version, opens it detached (see
// startDetached).
func (s *Store[T]) startNonOwner(ctx context.Context, st State) error {
	s.mu.Lock()
	s.mu.state = st
	s.mu.Unlock()
	if s.opts.CatalogVersion != 0 && st.CatalogVersion != 0 && st.CatalogVersion != s.opts.CatalogVersion {
		return s.startDetached(ctx, &CatalogVersionError{Owner: st.CatalogVersion, Build: s.opts.CatalogVersion})
	}
	b, err := s.opts.Open(ctx, true, s.submit)
	if err != nil {
		return err
	}
	s.hintTakes(b)
	s.backend = b
	s.becomeNonOwner()
	return nil
}

// becomeNonOwner gives this process, its backend open read-only, the
// non-owner role and starts its promoter (unless Options.NoPromotion).
func (s *Store[T]) becomeNonOwner() {
	s.setRole(RoleNonOwner)
	s.startSubscriber()
	if s.opts.NoPromotion {
		return
	}
	s.wg.Add(1)
	go s.promoter()
}

// startDetached opens the backend with Options.OpenDetached, or refuses
// with cause when there is none. A detached process starts no promoter:
// promoted, it would write a live file of its own catalog version and hide
// the store's data from every other build. It stays detached until it is
// reopened.
func (s *Store[T]) startDetached(ctx context.Context, cause *CatalogVersionError) error {
	if s.opts.OpenDetached == nil {
		return cause
	}
	b, err := s.opts.OpenDetached(ctx, s.submit, cause)
	if err != nil {
		return err
	}
	s.backend = b
	s.setRole(RoleDetached)
	s.log.Warn("detached: the owner runs another catalog version; reads fail, writes go through the spool",
		"owner_catalog_version", cause.Owner, "catalog_version", cause.Build)
	return nil
}

// promoteRetry is how often a non-owner tries the lock: a dead owner is
// replaced about half of it after the kernel dropped its lock, plus the
// promotion's own work. A try is one non-blocking flock call.
const promoteRetry = 20 * time.Millisecond

// promoter keeps trying the lock and promotes this process when it gets it.
// A lock error (the lock file could not be opened: every try re-opens it)
// or a failed promotion is retried after a pause, never given up on.
//
// A promotion that fails before the backend is writable lets the lock go,
// so that any process may try next. One that fails after (the socket
// cannot be served, the state file cannot be written) keeps it and retries
// serving: a writable backend must never outlive its lock, or this
// process would write beside the next owner.
//
// Before each try the live file is checked (see LiveChecker), so that a
// store deleted after its owner left gets no lock file made again; the
// promoter stops for good once the store is gone.
func (s *Store[T]) promoter() {
	defer s.wg.Done()
	var failures repeatedError
	var fast int // tries left at promoteFastRetry (see promoterPause)
	for {
		if err := s.checkLive(); err != nil && s.Gone() != nil {
			return
		}
		won, err := s.lock.try()
		if s.ctx.Err() != nil {
			if won {
				_ = s.lock.unlock()
			}
			return
		}
		if !won && err == nil {
			if !s.promoterPause(&fast) {
				return
			}
			continue
		}
		if won {
			writable, perr := s.promote(s.ctx)
			if perr == nil {
				return
			}
			if writable {
				s.serveUntilServed(perr)
				return
			}
			if s.Gone() != nil {
				return // promote let the lock go
			}
			err = perr
			_ = s.lock.unlock()
			if s.ctx.Err() != nil {
				return // the store is closing: its close cut the promotion short
			}
		}
		failures.log(s.log, "promotion failed; retrying every second", err)
		s.setLastError(err)
		if !s.pause(time.Second) {
			return
		}
	}
}

// serveUntilServed retries serveAsOwner every second, the lock held, after
// a promotion made the backend writable but could not serve (err), until
// it serves or the store closes; closing, it removes the state file (when
// it still names this process) and lets the lock go.
func (s *Store[T]) serveUntilServed(err error) {
	var failures repeatedError
	for tries := 1; ; tries++ {
		failures.log(s.log, "promoted but not serving; retrying every second with the lock held", err)
		s.setLastError(err)
		if !s.pause(time.Second) {
			_ = removeStateIfOurs(s.paths.State, s.id.Instance)
			_ = s.lock.unlock()
			return
		}
		if err = s.serveAsOwner(); err == nil {
			s.log.Info("promoted", "epoch", s.backend.Epoch(), "failedTries", tries)
			return
		}
	}
}

// repeatedError picks which failures of a retry loop are logged: the
// first, one whose text differs from the last one logged, and the same
// one again once a minute has passed since it was, with the count of
// those left out meanwhile ("repeats"). A store that cannot promote for
// an hour logs about sixty lines, not 3,600.
type repeatedError struct {
	last    string    // text of the last error logged
	at      time.Time // when it was logged
	skipped int       // failures left out since
}

// log logs err with msg at error level unless it repeats the last one
// logged less than a minute ago.
func (r *repeatedError) log(l *slog.Logger, msg string, err error) {
	text, now := err.Error(), time.Now()
	if text == r.last && now.Sub(r.at) < time.Minute {
		r.skipped++
		return
	}
	args := []any{"error", err}
	if r.skipped > 0 {
		args = append(args, "repeats", r.skipped)
	}
	l.Error(msg, args...)
	r.last, r.at, r.skipped = text, now, 0
}

// pause waits d, and reports false when the store closed meanwhile.
func (s *Store[T]) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// promote switches this process to owner with the lock held. It reports
// whether the backend is writable when it fails: the socket or the state
// file failed after the backend's promotion. A live file removed or
// replaced since the backend opened it (see LiveChecker) refuses it
// before anything is written: the store is gone, the lock file removed
// when the live file is missing, and the lock let go.
func (s *Store[T]) promote(ctx context.Context) (writable bool, err error) {
	start := time.Now()
	clock := newPromotionClock()
	s.push.clock = clock
	defer func() { s.push.clock, s.push.prev = nil, State{} }()
	if err := s.checkLive(); err != nil {
		if s.Gone() != nil {
			return false, s.refuseHeld(err)
		}
		return false, err
	}
	clock.mark("check live")
	s.push.prev, _ = ReadState(s.paths.State)
	if err := s.acquireFence(ctx); err != nil {
		return false, err
	}
	if err := s.writeState(PhaseStarting); err != nil {
		_ = s.releaseFence()
		return false, err
	}
	clock.mark("state starting")
	s.opts.Failpoint(FailDuringStarting)
	if err := s.backend.Promote(ctx); err != nil {
		_ = removeStateIfOurs(s.paths.State, s.id.Instance)
		_ = s.releaseFence()
		return false, fmt.Errorf("promote backend: %w", err)
	}
	clock.mark("backend")
	if err := s.serveAsOwner(); err != nil {
		return true, err
	}
	s.log.Info("promoted", "epoch", s.backend.Epoch(), "took", time.Since(start))
	s.opts.Metrics.promoted(s.backend.Epoch())
	if s.opts.Events.Promoted != nil {
		clock.p.Epoch = s.backend.Epoch()
		s.opts.Events.Promoted(clock.p)
	}
	return false, nil
}

// serveAsOwner binds the socket, writes state ready and starts the loops.
func (s *Store[T]) serveAsOwner() error {
	s.takeOverSocket(s.push.prev)
	ctrl, err := listenControl(s.paths.Socket, s, s.log)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.mu.ctrl = ctrl
	s.mu.Unlock()
	s.push.clock.mark("socket")
	s.ing.reset()
	s.opts.Failpoint(FailBeforeStateReady)
	if err := s.writeState(PhaseReady); err != nil {
		ctrl.close(s.id.Instance)
		return err
	}
	s.push.clock.mark("state ready")
	s.startReplica()
	s.setRole(RoleOwner)
	s.push.clock.mark("role")
	ctx, cancel := context.WithCancel(s.ctx)
	s.ownerCancel = cancel
	// The watch starts before the ingest loop's first drain: a batch
	// arriving after that drain's listing is then seen by the watch.
	s.startWatch(ctx)
	s.startPush(ctx)
	s.ownerWG.Add(4)
	go s.ingestLoop(ctx)
	go s.flushLoop(ctx)
	go s.heartbeatLoop(ctx)
	go s.gcLoop(ctx)
	if s.opts.Fence != nil {
		s.ownerWG.Add(1)
		go s.fenceLoop(ctx)
	}
	return nil
}

// writeState writes this owner's state with the given phase.
func (s *Store[T]) writeState(phase Phase) error {
	st := s.ownState(phase)
	if err := WriteState(s.paths.State, st); err != nil {
		s.setLastError(err)
		return fmt.Errorf("write state: %w", err)
	}
	s.mu.Lock()
	s.mu.state = st
	s.mu.Unlock()
	return nil
}

// ownState builds the state this process publishes as owner.
func (s *Store[T]) ownState(phase Phase) State {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	s.mu.Lock()
	prev := s.mu.state
	st := State{
		Instance: s.id.Instance, PID: os.Getpid(), Host: host, Build: s.opts.Build,
		Phase: phase, StartedAt: prev.StartedAt, HeartbeatAt: now,
		CatalogVersion: s.opts.CatalogVersion,
		Spool:          SpoolInfo{Dir: s.spool.Root(), ManifestFormat: spool.ManifestFormat, Formats: spool.Formats()},
		Socket:         s.paths.Socket,
		Backlog:        s.mu.backlog, Failed: s.mu.failed, Refused: s.mu.refused, LastError: s.mu.lastErr,
	}
	s.mu.Unlock()
	if prev.Instance != s.id.Instance || st.StartedAt.IsZero() {
		st.StartedAt = now
	}
	if phase != PhaseStarting {
		st.Epoch = s.backend.Epoch()
		st.Store = s.backend.LivePath()
		st.Corrupt = damageOf(s.backend)
	}
	return st
}

// stopServing closes the control socket and stops the owner's loops,
// waiting for them.
func (s *Store[T]) stopServing() {
	s.mu.Lock()
	ctrl := s.mu.ctrl
	s.mu.ctrl = nil
	s.mu.Unlock()
	if ctrl != nil {
		ctrl.close(s.id.Instance)
	}
	if s.ownerCancel != nil {
		s.ownerCancel()
	}
	s.ownerWG.Wait()
}

// closeOwner stops the socket and loops, drains, removes the state, unlocks
// and drains again while batches keep arriving and the lock is free.
func (s *Store[T]) closeOwner() error {
	s.stopServing()
	_ = s.writeState(PhaseDraining)
	_, err := s.finalDrain()
	err = s.leftBehind(err)
	s.opts.Failpoint(FailAfterFinalDrain)
	// What the replica could not take in time is not lost (it is in the
	// live file, and the next owner ships it): logged, not an error.
	_ = s.stopReplica()
	if rerr := removeStateIfOurs(s.paths.State, s.id.Instance); rerr != nil {
		err = errors.Join(err, rerr)
	}
	_ = s.releaseFence() // logged; the lease expires all the same
	if uerr := s.lock.unlock(); uerr != nil {
		err = errors.Join(err, uerr)
	}
	if s.opts.Fence != nil {
		return err // no drain without the lease: the next owner drains
	}
	return errors.Join(err, s.recheck())
}

// closeNonOwner drains the spool when DrainOnClose asks for it and the lock
// is free (the owner vanished and nobody took over). A detached process
// never does: it cannot write the store's catalog.
func (s *Store[T]) closeNonOwner() error {
	if s.Role() == RoleDetached || s.opts.NoPromotion || s.opts.Fence != nil || s.opts.DrainOnClose <= 0 || !s.spoolHasIncoming() {
		return nil
	}
	if s.Gone() != nil || s.checkLive() != nil {
		return nil // nothing of the store to drain into
	}
	won, err := s.lock.try()
	if err != nil || !won {
		return err
	}
	defer func() { _ = s.lock.unlock() }()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.DrainOnClose)
	defer cancel()
	if err := s.backend.Promote(ctx); err != nil {
		return fmt.Errorf("promote to drain on close: %w", err)
	}
	n, err := s.finalDrain()
	if n > 0 {
		s.shipOnce()
	}
	return s.leftBehind(err)
}

// recheckPause is how long a closing owner leaves the lock free between
// two rounds of recheck: longer than a waiting non-owner's pause between
// two tries of the lock (promotePushedRetry at most), so that a producer
// still publishing takes the store over rather than this process draining
// its batches round after round.
const recheckPause = promotePushedRetry + 50*time.Millisecond

// recheck closes the publish-after-final-drain race: a producer may have
// published after our last drain but before it saw the lock free. It stops
// when incoming is empty, another process holds the lock, a drain makes
// no progress, or DrainOnClose has passed since it began (what is left
// waits, durable, for the next owner). Its first round comes at once, each
// later one after recheckPause with the lock free.
func (s *Store[T]) recheck() error {
	deadline := time.Now().Add(s.opts.DrainOnClose)
	for round := 0; s.spoolHasIncoming(); round++ {
		if round > 0 {
			if time.Until(deadline) <= recheckPause {
				return nil // left, durable, for the next owner
			}
			time.Sleep(recheckPause)
		}
		won, err := s.lock.try()
		if err != nil || !won {
			return err
		}
		n, derr := s.finalDrainWithin(time.Until(deadline))
		if n > 0 {
			s.shipOnce()
		}
		_ = s.lock.unlock()
		if derr != nil || n == 0 {
			return s.leftBehind(derr)
		}
	}
	return nil
}

// leftBehind is what Close makes of the error of a final drain (err):
// a batch that could not be applied stays in incoming/, durable, for the
// next owner, and is someone else's work — the caller's own writes were
// answered before Close — so it is logged as a warning and Close does not
// fail for it. Only a failed fsync (recordstore.ErrFsync), which stopped this
// writer, is returned.
func (s *Store[T]) leftBehind(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fsutil.ErrSync) {
		return err
	}
	if f := s.fatal(); f != nil {
		return f
	}
	if errors.As(err, new(retryHeld)) { // its try is logged, with the error
		s.log.Warn("closing: batches left in incoming/ for the next owner")
		return nil
	}
	s.log.Warn("closing: batches left in incoming/ for the next owner", "error", err)
	return nil
}

func (s *Store[T]) spoolHasIncoming() bool {
	names, err := s.spool.List(context.Background(), spool.StateIncoming)
	return err == nil && len(names) > 0
}
