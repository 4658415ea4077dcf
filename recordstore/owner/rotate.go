// Rotating the owner's live file: the ingest loop is held between batches,
// applied batches leave incoming/, the backend switches files (Rotator),
// and the state file names the new live file.

package owner

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Rotator is the optional capability of a target that can switch its live
// file to one the caller names (sqlite.Backend.Rotate): it returns the old
// live file, which it no longer holds open.
type Rotator interface {
	Rotate(ctx context.Context, newLive string) (oldLive string, err error)
}

// Rotate switches the owner's live file to newLive and returns the old one.
// It waits for the drain running now to end and holds the next until it
// returns, so that no batch is half applied; it moves the batches applied
// so far out of incoming/ (after the backend's Sync); then the backend
// rotates (see Rotator; sqlite.Backend.Rotate copies the whole ledger, so
// a batch applied to the old file is never applied to the new one), and
// the state file is rewritten to name the new live file before ingest
// resumes.
//
// It fails with an error wrapping ErrNotOwner in a process that does not
// own the store, ErrNoRotation when the backend is no Rotator,
// a *FencedError once the store's lease (Options.Fence) is lost (nothing
// rotated: the old file stays live, no new file is left),
// recordstore.ErrUnsupported for a replicated store (Options.Replica: a
// replica follows one live file), and
// recordstore.ErrClosed after Close. On error of the flush or of the
// backend the old file stays live (see the backend's Rotate for what is on
// disk); when only the state file cannot be written, the new file is live
// and the error says so (the next heartbeat writes the state again).
func (s *Store[T]) Rotate(ctx context.Context, newLive string) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", err
	}
	if role := s.Role(); role != RoleOwner {
		return "", fmt.Errorf("rotate store %s: %w (role %s)", s.opts.Path, ErrNotOwner, role)
	}
	r, ok := any(s.backend).(Rotator)
	if !ok {
		return "", fmt.Errorf("rotate store %s: %w", s.opts.Path, ErrNoRotation)
	}
	if s.opts.Replica != nil {
		return "", recordstore.Errorf(recordstore.ErrUnsupported, "rotate store %s: a replicated store keeps one live file", s.opts.Path)
	}
	s.drain.lock()
	defer s.drain.unlock()
	if role := s.Role(); role != RoleOwner {
		return "", fmt.Errorf("rotate store %s: %w (role %s)", s.opts.Path, ErrNotOwner, role)
	}
	// A fenced owner that lost its lease rotates nothing (the backend's
	// seeding of the new file checks the lease again at its COMMIT).
	if err := s.checkFence(); err != nil {
		return "", fmt.Errorf("rotate store %s: %w", s.opts.Path, err)
	}
	if err := s.flushApplied(ctx); err != nil {
		return "", fmt.Errorf("rotate store %s: move applied batches out of incoming: %w", s.opts.Path, err)
	}
	old, err := r.Rotate(ctx, newLive)
	if err != nil {
		return "", err
	}
	s.log.Info("rotated", "old", old, "live", s.backend.LivePath())
	if err := s.writeState(PhaseReady); err != nil {
		return old, fmt.Errorf("rotate store %s: the new live file is live, but: %w", s.opts.Path, err)
	}
	s.wake()
	return old, nil
}

// LiveFile returns the backend's live file: in the owner, the one the
// last Rotate switched to.
func (s *Store[T]) LiveFile() string { return s.backend.LivePath() }
