// Deferred election (Options.DeferElection): a store opened read-only that
// takes part in the election only when an operation first needs an owner.

package owner

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// openDeferred opens the backend read-only, as a non-owner does, and
// leaves the store deferred. It reports false, with nothing open, when the
// backend cannot be opened so (no live file yet, another catalog
// version...): Open then runs the election at once.
func (s *Store[T]) openDeferred(ctx context.Context) bool {
	b, err := s.opts.Open(ctx, true, s.submit)
	if err != nil {
		s.log.Debug("deferred election: the backend cannot be opened read-only; electing now", "error", err)
		return false
	}
	s.hintTakes(b)
	s.backend = b
	s.setRole(RoleDeferred)
	return true
}

// elected runs the election of a deferred store, once: the callers that
// arrive while it runs wait for it (until their ctx ends) and then see its
// outcome. It returns at once for a store that is not deferred. On error
// the store is left deferred (see Options.DeferElection for the one
// exception) and the next caller tries again.
func (s *Store[T]) elected(ctx context.Context) error {
	if s.Role() != RoleDeferred {
		return nil
	}
	select {
	case s.elect <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.elect }()
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return fmt.Errorf("store %s: %w", s.opts.Path, recordstore.ErrClosed)
	}
	if s.mu.role != RoleDeferred {
		s.mu.Unlock()
		return nil
	}
	s.wg.Add(1) // Close waits for the election as for the promoter
	s.mu.Unlock()
	defer s.wg.Done()
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel) // Close ends the election
	defer stop()
	return s.runElection(ectx)
}

// runElection is the election of a deferred store, its backend already
// open read-only: the lock free, promote; held, wait for the owner to be
// ready and become a non-owner. A live file removed or replaced since the
// open (see LiveChecker) refuses it before the lock file is created, and
// again once the lock is held (promote) or the owner found ready: the
// store is then gone.
func (s *Store[T]) runElection(ctx context.Context) error {
	if err := s.checkLive(); err != nil {
		return fmt.Errorf("elect owner: %w", err)
	}
	won, err := s.lock.try()
	if err != nil {
		return err
	}
	var st State
	if !won {
		if st, won, err = s.waitReady(ctx); err != nil {
			return err
		}
	}
	if won {
		writable, err := s.promote(ctx)
		switch {
		case err == nil:
			return nil
		case writable:
			// A writable backend must keep its lock: serve as the
			// promoter would, in the background.
			s.setRole(RoleNonOwner)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveUntilServed(err)
			}()
			return fmt.Errorf("elect owner: %w", err)
		default:
			_ = s.lock.unlock()
			return fmt.Errorf("elect owner: %w", err)
		}
	}
	if s.opts.CatalogVersion != 0 && st.CatalogVersion != 0 && st.CatalogVersion != s.opts.CatalogVersion {
		return &CatalogVersionError{Owner: st.CatalogVersion, Build: s.opts.CatalogVersion}
	}
	// The owner found ready holds the lock, so the store cannot be deleted
	// now: a store deleted and made again since the first check is caught
	// here, before this process writes through the new store's spool.
	if err := s.checkLive(); err != nil {
		return fmt.Errorf("elect owner: %w", err)
	}
	s.mu.Lock()
	s.mu.state = st
	s.mu.Unlock()
	s.becomeNonOwner()
	return nil
}
