// query replica verify: restore the replica into a scratch folder and
// compare it with the live store.

package cli

import (
	"log/slog"

	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/spf13/cobra"
)

func (a *app) replicaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replica",
		Short: "Check the store's replica",
		Args:  cobra.NoArgs,
		RunE:  needSubcommand,
	}
	cmd.AddCommand(a.replicaVerifyCmd())
	return cmd
}

func (a *app) replicaVerifyCmd() *cobra.Command {
	var url, scratch string
	cmd := &cobra.Command{
		Use:   "verify --replica URL [--scratch DIR]",
		Short: "Restore the replica into a scratch folder and compare it with the live store",
		Long: `Restore the replica at --replica into a scratch folder (made 0700 under
--scratch, default the system's temp folder, and removed afterwards) with
every proof of query restore (codes gap, checksum, check_failed), then
compare each stream's high seq and row count with the live store, which is
read, never written, before and after the restore (an owner may be running).

Prints {"txid":N,"streams":N,"diffs":[...],"moving":BOOL}. When a stream
differs, or is on one side only, the object lists it in diffs
({"stream","liveHighSeq","replicaHighSeq","liveRows","replicaRows",
"missing"}) and verify, having printed it, fails with code mismatch and
exits 1. moving says the live store changed while verify ran: a replica
a few transactions behind is then expected; verify again once it is quiet.
A store with no live file is not_found.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if a.storePath == "" {
				return usagef("--store must not be empty")
			}
			if url == "" {
				return usagef("--replica is required: the replica address")
			}
			rep, err := replica.Verify(cmd.Context(), a.storePath, replica.VerifyOptions{
				Replica: url, Scratch: scratch, Logger: a.logger(slog.LevelWarn),
			})
			if err != nil && rep.TXID == 0 {
				return err
			}
			if rep.Diffs == nil {
				rep.Diffs = []replica.StreamDiff{}
			}
			if perr := a.printOne(rep); perr != nil {
				return perr
			}
			return err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&url, "replica", "", "replica address: s3://BUCKET/PREFIX?endpoint=... or file:///folder")
	f.StringVar(&scratch, "scratch", "", "folder to make the scratch folder in (default: the system's temp folder)")
	return cmd
}
