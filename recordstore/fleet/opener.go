// DefaultOpener: a fleet store opened by records.Open — owner election over
// the SQLite backend — with the store's file as its live file.

package fleet

import (
	"context"
	"log/slog"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/replica"
)

// StoreOptions configure DefaultOpener. The zero value is usable.
type StoreOptions struct {
	// Logger receives the stores' log lines.
	Logger *slog.Logger
	// Build names this build in state files and spool manifests.
	Build string
	// StartWait bounds a non-owner's wait for a store's owner (default
	// 60s).
	StartWait time.Duration
	// DrainOnClose bounds an owner's final drain (default 10s).
	DrainOnClose time.Duration
	// Heartbeat is an owner's state refresh period (default 5s).
	Heartbeat time.Duration
	// SweepInterval is the retention sweeper's period in an owner
	// (default: off — a fleet's stores are many and mostly idle).
	SweepInterval time.Duration
	// ReadConns is the reader pool of each store (default 2).
	ReadConns int
	// Failpoint is called at the owner's named points (crash tests).
	Failpoint func(name string)
	// EagerElection makes each open take part in its store's election at
	// once, as owner.Open does by default. Without it a store is opened
	// with owner.Options.DeferElection: read-only, taking no lock and
	// writing no state file or socket, until its first write elects this
	// process its owner (the lock free) or a non-owner; a store that is
	// only read never runs the election.
	EagerElection bool
	// Replica, when set, gives each store a replicator of its own under
	// the sub-prefix it is called with, the store key's ReplicaPrefix
	// ("tenant/<id>" or "slot/<nnnnn>"); replica.Factory makes one from the
	// fleet's replica address. A store replicates while this process owns
	// it, its checkpoints left to the replicator (see
	// owner.Options.Replica). The opener fails with its error.
	Replica func(sub string) (owner.Replicator, error)
	// Fence, when set, fences each store by a lease of its own under the
	// sub-prefix it is called with (as Replica is; see owner.Options.Fence):
	// this process owns a store only while it holds the store's lease,
	// and writes it no more once the lease is lost. replica.LeaseFactory
	// makes one from the fleet's s3:// replica address. The opener fails
	// with its error.
	Fence func(sub string) (owner.Fence, error)
	// CatchUpFrom, with Fence, is the fleet's replica address: each store
	// is caught up from its replica under its lease before this process
	// writes it as its owner (records.Options.CatchUp: replica.CatchUp
	// with the fleet's identity check), so that a store another host
	// wrote is taken over from the replica, and a missing one restored
	// (Options.RestoreMissing needs it).
	CatchUpFrom string
}

// DefaultOpener returns the Opener a fleet uses by default: records.Open,
// the store's file being both the configured path (its lock, state file,
// socket and spool lie beside it: P.lock, P.owner.json, P.sock, P.spool)
// and the live file (records.Options.LiveFile). The first process to take
// a store's lock owns it; the others read it and write through its spool;
// one whose owner runs another catalog version opens it detached
// (owner.RoleDetached). The election is deferred to a store's first write
// unless so.EagerElection is set (see there).
func DefaultOpener(so StoreOptions) Opener {
	sweep := so.SweepInterval
	if sweep == 0 {
		sweep = -1
	}
	conns := so.ReadConns
	if conns <= 0 {
		conns = 2
	}
	return func(ctx context.Context, path string) (*Store, error) {
		rep, err := storeReplica(ctx, so.Replica)
		if err != nil {
			return nil, err
		}
		fence, catchUp, err := storeFence(ctx, so, path)
		if err != nil {
			return nil, err
		}
		restoring := RestoringMissing(ctx)
		if restoring && catchUp == nil {
			return nil, recordstore.Errorf(recordstore.ErrInvalid, "restore the missing store %s: the opener has no lease to restore it under (StoreOptions.Fence and CatchUpFrom)", path)
		}
		return records.Open(ctx, path, records.Options{
			Owner: records.OwnerOptions{
				Build:        so.Build,
				StartWait:    so.StartWait,
				DrainOnClose: so.DrainOnClose,
				Heartbeat:    so.Heartbeat,
				Logger:       so.Logger,
				Failpoint:    so.Failpoint,
				// A missing store is restored by the owner's catch-up,
				// under its lease: the election runs at once.
				DeferElection: !so.EagerElection && !restoring,
				Replica:       rep,
				Fence:         fence,
			},
			CatchUp:       catchUp,
			SweepInterval: sweep,
			ReadConns:     conns,
			LiveFile:      path,
		})
	}
}

// storeReplica is the replicator of the store an Opener opens (KeyOf
// ctx), from the fleet's factory; nil without one.
func storeReplica(ctx context.Context, factory func(sub string) (owner.Replicator, error)) (owner.Replicator, error) {
	if factory == nil {
		return nil, nil
	}
	k, ok := KeyOf(ctx)
	if !ok {
		return nil, recordstore.Errorf(recordstore.ErrInvalid, "replicate a fleet store: the opener was not called by the fleet (no store key)")
	}
	return factory(k.ReplicaPrefix())
}

// storeFence is the fence of the store an Opener opens at path (KeyOf
// ctx), from so.Fence, and its catch-up from its replica under
// so.CatchUpFrom (records.Options.CatchUp, with the fleet's identity
// check); nil without so.Fence, and a nil catch-up without CatchUpFrom.
func storeFence(ctx context.Context, so StoreOptions, path string) (owner.Fence, func(ctx context.Context, live string, leased bool) error, error) {
	if so.Fence == nil {
		return nil, nil, nil
	}
	k, ok := KeyOf(ctx)
	if !ok {
		return nil, nil, recordstore.Errorf(recordstore.ErrInvalid, "fence a fleet store: the opener was not called by the fleet (no store key)")
	}
	fence, err := so.Fence(k.ReplicaPrefix())
	if err != nil {
		return nil, nil, err
	}
	if so.CatchUpFrom == "" {
		return fence, nil, nil
	}
	from, err := replica.Join(so.CatchUpFrom, k.ReplicaPrefix())
	if err != nil {
		return nil, nil, err
	}
	check := identityCheck(k, from)
	catchUp := func(ctx context.Context, live string, leased bool) error {
		_, err := replica.CatchUp(ctx, path, replica.CatchUpOptions{
			From: from, LiveFile: live, Check: check, Logger: so.Logger, NoLease: !leased,
		})
		return err
	}
	return fence, catchUp, nil
}
