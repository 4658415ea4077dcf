// query status: who owns the store, read from the outside — the state file
// and a status call over the owner's socket — without opening the store or
// taking its lock.

package cli

import (
	"context"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/spf13/cobra"
)

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Print who owns the store and whether it looks alive, without opening it",
		Long: `Print one JSON object about the store's owner: the fields of its state
file (instance, pid, host, build, phase, epoch, startedAt, heartbeatAt,
store, catalogVersion, socket, spool, backlog, failed, lastError) plus
socketAlive (the owner answered over its socket) and stale (its heartbeat
is older than three intervals, or the state says ready but its pid is
gone). When no process owns the store it prints {"phase":"none"}.

status neither opens the store nor takes its lock: it reads the state file
and asks the owner over its socket, so it is safe to run at any time.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			return a.status(cmd.Context())
		}),
	}
}

func (a *app) status(ctx context.Context) error {
	if a.storePath == "" {
		return usagef("--store must not be empty")
	}
	st, err := owner.ReadStatus(ctx, a.storePath, 0)
	if err != nil {
		return err
	}
	return a.printOne(recordresults.NewStatus(st))
}
