// query fleet restore: rebuild one store of a fleet from its replica.

package cli

import (
	"context"

	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/spf13/cobra"
)

// fleetRestored is the output of fleet restore.
type fleetRestored struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	replica.RestoreResult
}

func (a *app) fleetRestoreCmd(p *fleetArgs) *cobra.Command {
	var (
		from  string
		at    timeValue
		txid  uint64
		force bool
	)
	cmd := &cobra.Command{
		Use:   "restore KEY --from URL [--at TIME | --txid N] [--force]",
		Short: "Rebuild KEY's store from its replica, proven before it replaces anything",
		Long: `Rebuild KEY's store from its replica at --from (the address of this
store's replica: s3://BUCKET/PREFIX?endpoint=... or file:///folder), as of
the newest replicated transaction, the time --at or the transaction --txid,
with every proof of query restore (codes gap, checksum, check_failed, and
not_found for a point the replica does not reach); the copy must also
record KEY (a replica of another key's store is check_failed). The store
is closed in this process first; the root lock is held exclusive, so no
open on this host starts meanwhile, and a store another process owns is
refused (code in_use). A key that has a store is replaced only with
--force (code exists). A refusal changes nothing.

Across hosts sharing a root, flocks do not hold: restore there only under
the fleet's lease.

Prints {"key","path","liveFile","txid","files","bytes","replaced","report"}.`,
		Args: cobra.ExactArgs(1),
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the address of this store's replica")
	f.Var(&at, "at", "restore the store as it was at this time (RFC 3339)")
	f.Uint64Var(&txid, "txid", 0, "restore the store as it was after this replica transaction")
	f.BoolVar(&force, "force", false, "replace the key's store when it has one (never one a process owns)")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if from == "" {
			return usagef("--from is required: the address of the store's replica")
		}
		if txid != 0 && !at.t.IsZero() {
			return usagef("--at and --txid cannot be used together")
		}
		return a.withFleet(p, args, true, func(ctx context.Context, fl *fleet.Fleet, k fleet.Key) error {
			res, err := fl.Restore(ctx, k, fleet.RestoreOptions{From: from, At: at.t, TXID: txid, Force: force})
			if err != nil {
				return err
			}
			rel, err := fl.Template().Path(k)
			if err != nil {
				return err
			}
			return a.printOne(fleetRestored{Key: k.String(), Path: rel, RestoreResult: res})
		})(c, args)
	}
	return cmd
}
