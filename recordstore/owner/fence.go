// Fencing across hosts: the owner takes a lease (Options.Fence) before it
// writes, checks it before every commit, and stops writing for good — it
// steps down — once the lease is lost, before another host may take it.

package owner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Fence is a lease on the store shared by every host that may own it (an
// object store's lock object, see package recordstore/replica). The file
// lock orders the processes of one host; the fence orders the hosts. An
// owner holds both. Implementations are safe for concurrent use.
type Fence interface {
	// Acquire takes the lease and keeps it renewed until Release. It
	// returns the lease's generation, which grows with every new holder.
	// While another process holds the lease it fails with an error whose
	// code is "in_use" (errors.Is ErrFenceHeld, or an implementation's
	// own sentinel with that code); nothing is written then.
	Acquire(ctx context.Context) (generation int64, err error)
	// Check returns nil while the holder may write: no other process can
	// have taken the lease. Once it fails it fails for good.
	Check() error
	// Release gives the lease up so that another host may take it at
	// once. It is safe to call after a loss, and more than once.
	Release(ctx context.Context) error
	// Status reports the lease as this process sees it.
	Status() FenceStatus
}

// FenceStatus is the lease as its holder sees it, in Status.Lease.
type FenceStatus struct {
	// Target names the lease (the lock object's address, secrets
	// removed).
	Target string `json:"target,omitempty"`
	// Generation is the lease's fencing generation; 0 when not held.
	Generation int64 `json:"generation"`
	// Owner names the holder as the lock object records it.
	Owner string `json:"owner,omitempty"`
	// SafeUntil is when the holder stops trusting the lease unless it is
	// renewed before (the lease's expiry less a margin).
	SafeUntil time.Time `json:"safeUntil,omitzero"`
	// Lost is why the lease was lost; empty while it is held.
	Lost string `json:"lost,omitempty"`
}

// ErrFenceHeld is the sentinel a Fence may wrap when another process holds
// its lease; the owner then stays a non-owner and tries again later.
var ErrFenceHeld = errors.New("lease held by another process")

// ErrFenced is wrapped by FencedError: this process lost the store's lease
// and never writes the store again.
var ErrFenced = errors.New("fenced")

// FencedError is the error of every write after this process lost the
// store's lease (Options.Fence): another host may own the store. Nothing
// of the write was committed. Its code is "fenced".
type FencedError struct {
	// Err is why the lease was lost.
	Err error
}

// Error says that the write was refused and why.
func (e *FencedError) Error() string {
	return "the store's lease was lost, this process writes no more (reopen it to take the lease again): " + e.Err.Error()
}

// Unwrap makes errors.Is hold for ErrFenced and for the cause.
func (e *FencedError) Unwrap() []error { return []error{ErrFenced, e.Err} }

// ErrorCode is the error's stable code for recordstore.Code.
func (e *FencedError) ErrorCode() string { return "fenced" }

// fenceState is the store's side of Options.Fence.
type fenceState struct {
	mu      sync.Mutex
	gen     int64
	lost    error // a *FencedError once the lease is lost
	stepped bool  // a step-down was started
	wg      sync.WaitGroup
}

// fenceCheckEvery is how often the owner's fence loop checks the lease
// between commits, so that an idle owner steps down too.
const fenceCheckEvery = 100 * time.Millisecond

// acquireFence takes the lease before this process becomes the owner;
// with the file lock held, before anything is written. On error nothing
// was written and no lease is held.
func (s *Store[T]) acquireFence(ctx context.Context) error {
	f := s.opts.Fence
	if f == nil {
		return nil
	}
	if err := s.fencedErr(); err != nil {
		return err
	}
	gen, err := f.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("take the store's lease: %w", err)
	}
	s.fence.mu.Lock()
	s.fence.gen = gen
	s.fence.mu.Unlock()
	s.log.Info("lease taken", "generation", gen)
	return nil
}

// fenceHeld reports whether err is a lease held by another process.
func fenceHeld(err error) bool {
	if errors.Is(err, ErrFenceHeld) {
		return true
	}
	var c interface{ ErrorCode() string }
	return errors.As(err, &c) && c.ErrorCode() == "in_use"
}

// releaseFence gives the lease up (closing as owner, or stepping down).
func (s *Store[T]) releaseFence() error {
	f := s.opts.Fence
	if f == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.shipWait())
	defer cancel()
	if err := f.Release(ctx); err != nil {
		s.log.Warn("the lease was not released; another host takes it once it expires", "err", err)
		return err
	}
	return nil
}

// fencedErr is the sticky *FencedError once the lease was lost, else nil.
func (s *Store[T]) fencedErr() error {
	s.fence.mu.Lock()
	defer s.fence.mu.Unlock()
	return s.fence.lost
}

// checkFence is called before every commit of the owner: nil while the
// lease holds (or there is no fence); a *FencedError once it does not, and
// then the owner steps down.
func (s *Store[T]) checkFence() error {
	f := s.opts.Fence
	if f == nil {
		return nil
	}
	if err := s.fencedErr(); err != nil {
		return err
	}
	if err := f.Check(); err != nil {
		return s.loseFence(err)
	}
	return nil
}

// CheckFence returns nil while this process may write the store as far as
// its lease (Options.Fence) goes — always without a Fence — and a
// *FencedError once the lease is lost (the owner then steps down). A
// caller writing a file of the store by other means than the backend
// (sealing a file Rotate returned, with sqlite.SealWith) calls it just
// before its COMMIT.
func (s *Store[T]) CheckFence() error { return s.checkFence() }

// loseFence records the loss of the lease (cause) for good and starts the
// step-down, once, unless Close has begun (it then leaves the owner role
// itself). It returns the *FencedError every later write gets.
func (s *Store[T]) loseFence(cause error) error {
	s.fence.mu.Lock()
	if s.fence.lost == nil {
		s.fence.lost = &FencedError{Err: cause}
	}
	lost := s.fence.lost
	start := !s.fence.stepped
	s.fence.stepped = true
	s.fence.mu.Unlock()
	if !start {
		return lost
	}
	s.log.Error("lease lost: stepping down; this process writes no more", "err", cause)
	s.setLastError(lost)
	s.mu.Lock()
	closed := s.mu.closed
	if !closed {
		s.fence.wg.Add(1)
	}
	s.mu.Unlock()
	if !closed {
		go s.stepDown()
	}
	return lost
}

// stepDown leaves the owner role after the lease was lost: the socket and
// the loops stop, replication stops without shipping more (another host
// may own the replica now), the state file goes, the lease and the lock
// are let go, and the process stays a non-owner without a promoter. Its
// backend stays open for reads; every write fails with the FencedError.
func (s *Store[T]) stepDown() {
	defer s.fence.wg.Done()
	s.stopServing()
	if r := s.opts.Replica; r != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // ship nothing more
		_ = r.Stop(ctx)
	}
	_ = removeStateIfOurs(s.paths.State, s.id.Instance)
	_ = s.releaseFence()
	_ = s.lock.unlock()
	s.setRole(RoleNonOwner)
}

// fenceLoop checks the lease between commits, so that an owner with
// nothing to write steps down as soon as its lease is lost.
func (s *Store[T]) fenceLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	t := time.NewTicker(fenceCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.checkFence() != nil {
			return
		}
	}
}

// fenceStatus is the lease's status, or nil without a fence.
func (s *Store[T]) fenceStatus() *FenceStatus {
	if s.opts.Fence == nil {
		return nil
	}
	st := s.opts.Fence.Status()
	if err := s.fencedErr(); err != nil && st.Lost == "" {
		st.Lost = err.Error()
	}
	return &st
}
