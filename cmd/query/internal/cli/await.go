// query await: waiting for the outcome of a batch published earlier — one
// that append --no-wait printed, or that an append's --timeout left
// pending.

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
)

func (a *app) awaitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "await BATCH [--timeout D]",
		Short: "Wait for the owner's outcome of a spooled batch and print it",
		Long: `Wait until the store's owner has applied (or refused) batch BATCH — a batch
id as append --no-wait prints it, or a batch name as spool ls prints it —
and print its outcome as the ledger records it, one JSON object:

  {"id","outcome","epoch","ingestedAt","entries":[...],"error"}

outcome is committed or failed; each entry says what it did (an append's
window, a seal's metadata) or why it failed. When the batch failed, or one
of its entries did, the line is printed all the same and the command fails
(exit 1) with that error's code. Like every command that opens the store,
await becomes the owner when no process owns it, and then applies the
batch itself.

--timeout bounds the wait (default: none; SIGINT or SIGTERM also end it):
when it runs out the command fails with code pending. A refused batch
still in failed/ after its ledger row was swept is answered from its
error.json; one that neither the ledger nor the spool holds fails with
not_found.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usagef("--timeout must not be negative")
			}
			return a.await(cmd.Context(), args[0], timeout)
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long to wait for the outcome, like 5s (default: no limit)")
	return cmd
}

func (a *app) await(ctx context.Context, arg string, timeout time.Duration) error {
	id, err := spool.IDOf(arg)
	if err != nil {
		return err
	}
	return a.quietly(ctx, func(st *records.Store) error {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		defer cancel()
		res, err := st.Await(actx, id)
		if err != nil {
			return err
		}
		if err := a.printOne(res); err != nil {
			return err
		}
		if berr := res.Err(); berr != nil {
			return fmt.Errorf("batch %s: %w", id, berr)
		}
		return nil
	})
}
