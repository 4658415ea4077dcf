// query status: who owns the store, read from the outside — the state file
// and a status call over the owner's socket — without opening the store or
// taking its lock.

package cli

import (
	"context"
	"fmt"

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
store, catalogVersion, socket, spool, backlog, failed, refused, lastError) plus
socketAlive (the owner answered over its socket), stale (its heartbeat
is older than three intervals, or the state says ready but its pid is
gone) and wake: "push" when the owner answered (it pushes a notice of
each commit to the processes that follow the store, which then wake at
once; subscribers counts them, left out when none), "polling" when it
did not (followers in other processes then see commits at their next
poll of the file). backlog is counted in the spool's incoming/ folder when the status
is taken (by the owner when it answers: the batches it has not applied),
never taken from the state file's last heartbeat. When no process owns
the store it prints {"phase":"none"}; when the state file is not a valid
state (garbage) it prints {"phase":"unknown","backlog":N,"hint":"..."}
and exits 0: the next process to own the store replaces the file.

When the owner met a damaged live file (a read or a write found a damaged
page; its state file records it at each heartbeat, its socket answers it
at once) the object has a "corrupt" field with the damage, and status,
having printed it, fails with code corrupt and exits 1: restore the live
file from a backup.

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
	if st.Phase == owner.PhaseUnknown {
		return a.printOne(unknownStatus{Phase: st.Phase, Backlog: st.Backlog, Hint: st.Hint})
	}
	if err := a.printOne(recordresults.NewStatus(st)); err != nil {
		return err
	}
	if st.State.Corrupt != nil {
		// Printed, and failed: the owner met a damaged live file.
		return fmt.Errorf("the owner met a damaged live file: %w", st.State.Corrupt)
	}
	return nil
}

// unknownStatus is the output of status when the state file cannot be
// read: the phase, the batches waiting in incoming/ and what to do.
type unknownStatus struct {
	Phase   owner.Phase `json:"phase"`
	Backlog int         `json:"backlog"`
	Hint    string      `json:"hint"`
}
