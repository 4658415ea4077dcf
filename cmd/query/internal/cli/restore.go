// query restore: rebuild a store from its replica, with proof.

package cli

import (
	"context"
	"log/slog"

	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/spf13/cobra"
)

func (a *app) restoreCmd() *cobra.Command {
	var (
		from  string
		at    timeValue
		txid  uint64
		force bool
	)
	cmd := &cobra.Command{
		Use:   "restore --from URL [--at TIME | --txid N] [--force]",
		Short: "Rebuild the store from its replica, proven before it replaces anything",
		Long: `Rebuild the store's live file from the replica at --from (s3://BUCKET/PREFIX?endpoint=...
or file:///folder; S3 credentials come from the environment, never from the
address), as of the newest replicated transaction, the time --at (RFC 3339:
the newest transaction replicated before it) or the transaction --txid.

The file is built into a staging file (0600) beside the live file and
proven before anything is replaced: the replica's history must have no hole
before the point asked for (code gap), every replica file read must pass its
checksum (code checksum), and the copy must pass PRAGMA integrity_check and
the engine's consistency checks: catalog, kinds and their tables, streams
against their rows, ledger (code check_failed). Then it is fsynced and
renamed over the live file. A refusal changes nothing: no file of the store
is touched, the staging file is removed, and nothing in the replica is
deleted.

A store that has a live file is replaced only with --force (code exists),
and never while a process owns it (code in_use): stop the owner first. The
store's lock is held for the whole restore, so no owner starts meanwhile.
A point the replica does not reach, or an empty replica, is not_found.

Prints {"liveFile":...,"txid":N,"files":N,"bytes":N,"replaced":BOOL,
"report":{"epoch":N,"kinds":N,"ledgerRows":N,"streams":[...]}}.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if a.storePath == "" {
				return usagef("--store must not be empty")
			}
			if from == "" {
				return usagef("--from is required: the replica address")
			}
			if txid != 0 && !at.t.IsZero() {
				return usagef("--at and --txid cannot be used together")
			}
			return a.restore(cmd.Context(), replica.RestoreOptions{
				From: from, At: at.t, TXID: txid, Force: force, Logger: a.logger(slog.LevelWarn),
			})
		}),
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "replica address: s3://BUCKET/PREFIX?endpoint=... or file:///folder")
	f.Var(&at, "at", "restore the store as it was at this time (RFC 3339)")
	f.Uint64Var(&txid, "txid", 0, "restore the store as it was after this replica transaction")
	f.BoolVar(&force, "force", false, "replace a store that has a live file (never one a process owns)")
	return cmd
}

func (a *app) restore(ctx context.Context, opts replica.RestoreOptions) error {
	res, err := replica.Restore(ctx, a.storePath, opts)
	if err != nil {
		return err
	}
	return a.printOne(res)
}
