// --replica: every command that may own the store (and query serve, and
// the fleet commands, for each store they own) replicates the live file to
// the address it names while it owns the store.

package cli

import (
	"log/slog"
	"strings"

	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/spf13/pflag"
)

// ReplicaEnv is the environment variable --replica defaults to.
const ReplicaEnv = "RECORDS_REPLICA"

// registerReplica adds --replica to the global flags.
func (a *app) registerReplica(pf *pflag.FlagSet) {
	pf.StringVar(&a.replica, "replica", a.env.Getenv(ReplicaEnv),
		"replicate the store while this process owns it: s3://BUCKET/PREFIX?endpoint=URL&region=R&forcePathStyle=true or file:///FOLDER; defaults to $"+ReplicaEnv+"; S3 credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE), never from the address")
	pf.StringVar(&a.lease, "lease", "",
		"s3: own the store only while holding its lease, the lock object under the s3:// --replica's prefix, so that one host at a time writes it; a process that loses the lease writes no more (its writes fail with code fenced)")
	pf.DurationVar(&a.leaseTTL, "lease-ttl", replica.DefaultLeaseTTL,
		"with --lease: how long the lease lasts unrenewed (renewed every third of it); the owner stops writing a fifth of it before another host may take it")
}

// fence is --lease's fence for the store, nil without --lease. --lease
// other than s3, or without an s3:// --replica, is a usage error.
func (a *app) fence() (owner.Fence, error) { return a.fenceAt(a.replica) }

// fenceAt is fence for the store replicated at url (--replica, or a
// sub-prefix of it).
func (a *app) fenceAt(url string) (owner.Fence, error) {
	if a.lease == "" {
		return nil, nil
	}
	if a.lease != "s3" {
		return nil, usagef("--lease must be s3, not %q", a.lease)
	}
	if !strings.HasPrefix(a.replica, "s3://") {
		return nil, usagef("--lease s3 needs an s3:// --replica: the lease is an object under the replica's prefix")
	}
	if a.leaseTTL <= 0 {
		return nil, usagef("--lease-ttl must be positive, not %s", a.leaseTTL)
	}
	return replica.NewLeaseFence(url, replica.LeaseOptions{TTL: a.leaseTTL, Logger: a.logger(slog.LevelWarn)}), nil
}

// replicator is --replica's replicator for one store, nil without
// --replica. A bad address is refused with code invalid.
func (a *app) replicator() (owner.Replicator, error) { return a.replicatorAt(a.replica) }

// replicatorAt is replicator for the replica address url (--replica, or a
// sub-prefix of it).
func (a *app) replicatorAt(url string) (owner.Replicator, error) {
	if url == "" {
		return nil, nil
	}
	r, err := replica.New(url, replica.Options{Logger: a.logger(slog.LevelWarn)})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// workerReplica is --replica and --lease for the stores of Drakkar worker
// name: each store replicates under the sub-prefix <name>/<store> of the
// address (store: worker.StoreRecorder, worker.StoreCache), and a call
// makes a new replicator and fence (a recorder that takes its store over
// opens it again). It returns nil without --replica; a bad address or
// --lease is refused before anything is opened.
func (a *app) workerReplica(name string) (func(store string) (owner.Replicator, owner.Fence, error), error) {
	if a.replica == "" {
		if a.lease != "" {
			_, err := a.fenceAt("")
			return nil, err
		}
		return nil, nil
	}
	at := func(store string) (string, error) { return replica.Join(a.replica, name+"/"+store) }
	url, err := at(worker.StoreRecorder)
	if err != nil {
		return nil, err
	}
	if _, err := a.replicatorAt(url); err != nil {
		return nil, err
	}
	if _, err := a.fenceAt(url); err != nil {
		return nil, err
	}
	return func(store string) (owner.Replicator, owner.Fence, error) {
		url, err := at(store)
		if err != nil {
			return nil, nil, err
		}
		r, err := a.replicatorAt(url)
		if err != nil {
			return nil, nil, err
		}
		f, err := a.fenceAt(url)
		if err != nil {
			return nil, nil, err
		}
		return r, f, nil
	}, nil
}

// fleetReplica sets so.Replica from --replica: each store of the fleet
// replicates under its key's prefix (tenant/<id>, slot/<n>); with --lease
// s3, so.Fence and so.CatchUpFrom too: each store is owned only under its
// own lease, the lock object under that prefix, and caught up from its
// replica before this process writes it. restoreMissing is the fleet's
// --restore-missing: it needs --replica and --lease s3 (a usage error
// otherwise). It returns the fleet's RestoreMissing and Replica options.
func (a *app) fleetReplica(so *fleet.StoreOptions, restoreMissing bool) (fleet.Options, error) {
	var fo fleet.Options
	if restoreMissing && (a.replica == "" || a.lease == "") {
		return fo, usagef("--restore-missing needs --replica and --lease s3: a missing store is restored from its replica under its lease only")
	}
	if a.replica == "" {
		if a.lease != "" {
			return fo, usagef("--lease s3 needs an s3:// --replica: the lease is an object under the replica's prefix")
		}
		return fo, nil
	}
	f, err := replica.Factory(a.replica, replica.Options{Logger: a.logger(slog.LevelWarn)})
	if err != nil {
		return fo, err
	}
	so.Replica = f
	if a.lease == "" {
		return fo, nil
	}
	// Checks --lease, --lease-ttl and the s3:// address as for one store.
	if _, err := a.fence(); err != nil {
		return fo, err
	}
	fences, err := replica.LeaseFactory(a.replica, replica.LeaseOptions{TTL: a.leaseTTL, Logger: a.logger(slog.LevelWarn)})
	if err != nil {
		return fo, err
	}
	so.Fence, so.CatchUpFrom = fences, a.replica
	fo.RestoreMissing, fo.Replica = restoreMissing, a.replica
	return fo, nil
}
