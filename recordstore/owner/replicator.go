// Replication: the owner runs a Replicator (Options.Replica) for as long as
// it owns the store — started when it becomes the owner, asked to ship and
// stopped before it lets go of the lock — so that only one process ever
// ships the live file, and a promotion starts shipping at once.

package owner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Replicator ships the commits of a store's live file to a replica while
// this process owns the store. The owner calls Start when it becomes the
// owner (with the lock held) and Stop before it releases the lock, so that
// two processes never ship the same file at once. Implementations are safe
// for concurrent use; package recordstore/replica has one built on
// Litestream.
type Replicator interface {
	// Start begins shipping the live file at live (an absolute path) in
	// the background. A replica that cannot be reached is not an error of
	// Start: shipping keeps trying, and Status reports the failure.
	Start(ctx context.Context, live string) error
	// Wait returns once the replica holds every transaction committed to
	// the live file before the call, or with the error that kept it from
	// shipping them (ctx's when it ends first). Without Start it fails
	// with an error wrapping ErrNotReplicating.
	Wait(ctx context.Context) error
	// Stop ships what is left, giving up when ctx ends, and stops. What
	// it could not ship stays in the live file and its WAL, and the next
	// owner ships it. It is a no-op when not started.
	Stop(ctx context.Context) error
	// Status reports where shipping stands.
	Status() ReplicaStatus
}

// ErrNotReplicating is returned by Store.WaitReplicated (and a write with
// WriteOptions.Replicated) when the store's owner runs no replica. It
// wraps recordstore.ErrUnsupported.
var ErrNotReplicating = fmt.Errorf("%w: the store is not replicated (open it with a replica, query --replica URL)", recordstore.ErrUnsupported)

// ReplicaStatus is where the owner's replication stands, in Status.Replica.
type ReplicaStatus struct {
	// Target is the replica's address, with anything secret removed.
	Target string `json:"target"`
	// Running is true while the owner ships.
	Running bool `json:"running"`
	// LocalTXID is the last transaction of the live file seen by the
	// replicator; ReplicaTXID the last one the replica holds.
	LocalTXID   uint64 `json:"localTxid"`
	ReplicaTXID uint64 `json:"replicaTxid"`
	// LagSeconds is how long the oldest commit the replica does not hold
	// yet has waited (0 when it holds every commit); LagBytes how many
	// bytes of the WAL were written since the last shipped position.
	LagSeconds float64 `json:"lagSeconds"`
	LagBytes   int64   `json:"lagBytes"`
	// ShippedAt is when the replica last caught up.
	ShippedAt time.Time `json:"shippedAt,omitzero"`
	// LastError is the last shipping error, kept until a ship succeeds;
	// FailingSince is when shipping started to fail (zero while it works).
	LastError    string    `json:"lastError,omitempty"`
	FailingSince time.Time `json:"failingSince,omitzero"`
}

// shipWait bounds the ship of Stop on Close and after a drain on close.
func (s *Store[T]) shipWait() time.Duration {
	return s.opts.DrainOnClose
}

// startReplica starts the replicator on the live file, if there is one.
// Its failure is logged and recorded as the store's last error: the
// owner serves all the same, and Status shows that it does not ship.
func (s *Store[T]) startReplica() {
	r := s.opts.Replica
	if r == nil {
		return
	}
	if err := r.Start(s.ctx, s.backend.LivePath()); err != nil {
		s.log.Error("replication did not start", "err", err)
		s.setLastError(fmt.Errorf("replication: %w", err))
		return
	}
	s.log.Info("replicating", "target", r.Status().Target)
}

// stopReplica ships what is left, bounded by shipWait, and stops the
// replicator. An error is logged and returned.
func (s *Store[T]) stopReplica() error {
	r := s.opts.Replica
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.shipWait())
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		s.log.Warn("closing: the replica may miss the last commits; the next owner ships them", "err", err)
		return fmt.Errorf("replication: %w", err)
	}
	return nil
}

// shipOnce starts and stops the replicator around a write this process
// made while holding the lock outside its owner role (a drain on close).
func (s *Store[T]) shipOnce() {
	if s.opts.Replica == nil {
		return
	}
	s.startReplica()
	_ = s.stopReplica()
}

// replicaStatus is the replicator's status, or nil without one.
func (s *Store[T]) replicaStatus() *ReplicaStatus {
	if s.opts.Replica == nil {
		return nil
	}
	st := s.opts.Replica.Status()
	return &st
}

// WaitReplicated returns once the store's replica holds every transaction
// the owner committed before the call: in the owner directly, elsewhere by
// asking the owner over its socket. It fails with an error wrapping
// ErrNotReplicating when the owner runs no replica, and with the
// replicator's error (or ctx's) when it cannot ship. A non-owner's wait is
// also bounded by the control socket's deadline (10 s per request). It
// writes nothing.
func (s *Store[T]) WaitReplicated(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if s.Role() == RoleOwner {
		if s.opts.Replica == nil {
			return ErrNotReplicating
		}
		return s.opts.Replica.Wait(ctx)
	}
	return callReplicated(ctx, s.paths.Socket)
}

// callReplicated asks the owner serving socket to wait for its replica.
func callReplicated(ctx context.Context, socket string) error {
	resp, err := Call(ctx, socket, Request{Action: ActionReplicated})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("wait for the replica: %w", ctx.Err())
		}
		return fmt.Errorf("wait for the replica: ask the owner: %w", err)
	}
	switch {
	case resp.OK:
		return nil
	case resp.NotReplicated:
		return ErrNotReplicating
	}
	return fmt.Errorf("wait for the replica: %w", errors.New(resp.Error))
}

// controlReplicated answers ActionReplicated: the owner's Wait.
func (s *Store[T]) controlReplicated(ctx context.Context) (notReplicated bool, err error) {
	if s.opts.Replica == nil {
		return true, ErrNotReplicating
	}
	return false, s.opts.Replica.Wait(ctx)
}

// NotReplicatedError is the error of a write with WriteOptions.Replicated
// that was applied but that the replica was not shown to hold (the wait
// ended, or shipping failed): the write stays applied, and the replica
// gets it once shipping works again. Its code is "not_replicated".
type NotReplicatedError struct {
	// Err is why the wait ended: the replicator's error, ctx's, or
	// ErrNotReplicating.
	Err error
}

// Error says that the write was applied and why the wait ended.
func (e *NotReplicatedError) Error() string {
	return "applied, but the replica does not hold it yet: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *NotReplicatedError) Unwrap() error { return e.Err }

// ErrorCode is the error's stable code for recordstore.Code.
func (e *NotReplicatedError) ErrorCode() string { return "not_replicated" }

// waitReplicatedAfter waits for the replica after a write that asked for
// it (opts.Replicated) and succeeded without being left pending; the
// wait's failure becomes the write's error as a *NotReplicatedError.
func (s *Store[T]) waitReplicatedAfter(ctx context.Context, opts WriteOptions, w *Written, err *error) {
	if !opts.Replicated || *err != nil || w.Pending {
		return
	}
	if werr := s.WaitReplicated(ctx); werr != nil {
		*err = &NotReplicatedError{Err: werr}
	}
}

// ReplicaStatus returns the replicator's status while this process owns
// the store and runs one; ok is false otherwise. It is cheap (no I/O but a
// stat of the WAL), for callers that watch many stores.
func (s *Store[T]) ReplicaStatus() (st ReplicaStatus, ok bool) {
	if s.opts.Replica == nil || s.Role() != RoleOwner {
		return ReplicaStatus{}, false
	}
	return s.opts.Replica.Status(), true
}
