// --replica: every command that may own the store (and query serve, and
// the fleet commands, for each store they own) replicates the live file to
// the address it names while it owns the store.

package cli

import (
	"log/slog"

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
}

// replicator is --replica's replicator for one store, nil without
// --replica. A bad address is refused with code invalid.
func (a *app) replicator() (owner.Replicator, error) {
	if a.replica == "" {
		return nil, nil
	}
	r, err := replica.New(a.replica, replica.Options{Logger: a.logger(slog.LevelWarn)})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// fleetReplica sets so.Replica from --replica: each store of the fleet
// replicates under its key's prefix (tenant/<id>, slot/<n>).
func (a *app) fleetReplica(so *fleet.StoreOptions) error {
	if a.replica == "" {
		return nil
	}
	f, err := replica.Factory(a.replica, replica.Options{Logger: a.logger(slog.LevelWarn)})
	if err != nil {
		return err
	}
	so.Replica = f
	return nil
}
