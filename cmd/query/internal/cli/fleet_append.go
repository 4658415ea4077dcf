// query fleet append: query append's rows, flags and output, written to a
// fleet store through the fleet (its key, its owner election).

package cli

import (
	"context"

	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/spf13/cobra"
)

func (a *app) fleetAppendCmd(fp *fleetArgs) *cobra.Command {
	p := appendArgs{format: newEnum("ndjson", "ndjson")}
	cmd := &cobra.Command{
		Use:   "append KEY --stream S --kind K [--schema FILE] [--format ndjson] [--no-wait | --timeout D] [--batch-rows N] [FILE|-]",
		Short: "Append the rows of an NDJSON file (or stdin) to a stream of KEY's store",
		Long: `Append the rows of an NDJSON file (or stdin) to a stream of the store of
KEY, as "query append" appends to --store: the same input, flags, limits,
all-or-nothing append (or batches with --batch-rows) and output
({"stream","kind","from","to","appended","skipped","replaced","role"}).

The store is opened through the fleet: its identity is checked (a file
recording another key is code misplaced), then its owner election runs.
When no process owns the store this one applies the rows; when another
does (a service that wrote it, another query fleet append), they go
through the store's spool and its owner's result comes back (role
"spooled"). query serve --fleet only reads: it owns no store.

A tenant fleet never creates a store here: a key without one is code
not_found (create it with provision). A slot fleet creates it on first
use, with the kinds of --kinds. KEY is a key as list prints it; a bad one
is code invalid, before anything is read or opened.`,
		Args: cobra.RangeArgs(1, 2),
	}
	p.register(cmd)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := p.take(args[1:]); err != nil { // usage errors, before the fleet is opened
			return err
		}
		return a.withFleet(fp, args, true, func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error {
			in, closeInput, err := a.openAppend(p)
			if err != nil {
				return err
			}
			defer closeInput()
			return f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
				return appendInto(ctx, a, st, in)
			})
		})(c, args)
	}
	return cmd
}
