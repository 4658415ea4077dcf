// Stream lifecycle commands: meta and streams, which read; seal, reopen,
// delete, expire and trim, which write.

package cli

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

// streamOp is what a stream command does with the store's backend.
type streamOp func(ctx context.Context, b recordstore.Backend, stream string) (any, error)

// readStreamCmd builds a command that takes a required --stream, opens the
// store for reading, applies op to it and prints what op returns.
func (a *app) readStreamCmd(use, short string, op streamOp) *cobra.Command {
	stream := new(string)
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := recordstore.ValidateStreamID(*stream); err != nil {
				return err
			}
			return a.reading(ctx, func(st *records.Store) error {
				out, err := op(ctx, st.Backend(), *stream)
				if err != nil {
					return err
				}
				return a.printOne(out)
			})
		}),
	}
	cmd.Flags().StringVar(stream, "stream", "", "the stream (required)")
	_ = cmd.MarkFlagRequired("stream")
	return cmd
}

func (a *app) metaCmd() *cobra.Command {
	return a.readStreamCmd("meta --stream S", "Print a stream's metadata",
		func(ctx context.Context, b recordstore.Backend, stream string) (any, error) {
			m, err := b.Meta(ctx, stream)
			if err != nil {
				return nil, err
			}
			return m, nil
		})
}

// writeCmd builds a command that takes a required --stream and the wait
// flags, applies the stream operation entry returns (called once the flags
// are parsed) and prints the stream's metadata after it — or what show
// makes of it, when show is not nil — or, with --no-wait through the
// spool, the pending batch.
func (a *app) writeCmd(use, short string, entry func(stream string) recordstore.BatchEntry, show func(stream string, m *recordstore.Meta) any) *cobra.Command {
	stream := new(string)
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   use + " [--no-wait | --timeout D]",
		Short: short,
		Long: short + `.

When another process owns the store, the operation is checked here, goes
through the spool, and the command waits for the owner's answer: --timeout
bounds the wait (when it runs out the command fails with code pending and
the batch id, and the batch is still applied, once). With --no-wait it
prints {"batch":...,"pending":true} as soon as the batch is in the spool;
"query await BATCH" prints its outcome later.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := recordstore.ValidateStreamID(*stream); err != nil {
				return err
			}
			if err := wait.check(); err != nil {
				return err
			}
			return a.quietly(ctx, func(st *records.Store) error {
				actx, cancel := wait.bound(ctx)
				defer cancel()
				res, err := st.Mutate(actx, entry(*stream), wait.options())
				switch {
				case err != nil:
					return err
				case res.Pending:
					return a.printOne(recordresults.PendingBatch{Batch: res.Batch, Pending: true})
				case show != nil:
					return a.printOne(show(*stream, res.Meta))
				}
				return a.printOne(res.Meta)
			})
		}),
	}
	cmd.Flags().StringVar(stream, "stream", "", "the stream (required)")
	_ = cmd.MarkFlagRequired("stream")
	wait.register(cmd.Flags())
	return cmd
}

func (a *app) sealCmd() *cobra.Command {
	return a.writeCmd("seal --stream S", "Refuse further appends to a stream; print its metadata after",
		func(stream string) recordstore.BatchEntry {
			return recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: stream}
		}, nil)
}

func (a *app) reopenCmd() *cobra.Command {
	var generation int64
	cmd := a.writeCmd("reopen --stream S --generation N", "Unseal a stream, if it is still at generation N; print its metadata after",
		func(stream string) recordstore.BatchEntry {
			return recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: stream, Generation: generation}
		}, nil)
	cmd.Flags().Int64Var(&generation, "generation", 0, "the generation the stream must still be at, as meta prints it (required)")
	_ = cmd.MarkFlagRequired("generation")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		// Runs before cobra checks required flags: a missing flag is
		// reported as such.
		if cmd.Flags().Changed("generation") && generation < 1 {
			return usagef("--generation must be at least 1")
		}
		return nil
	}
	return cmd
}

// deleted is the output of query delete.
type deleted struct {
	Stream  string `json:"stream"`
	Deleted bool   `json:"deleted"`
}

func (a *app) deleteCmd() *cobra.Command {
	return a.writeCmd("delete --stream S", "Delete a stream and its rows",
		func(stream string) recordstore.BatchEntry {
			return recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: stream}
		},
		func(stream string, _ *recordstore.Meta) any { return deleted{Stream: stream, Deleted: true} })
}

func (a *app) expireCmd() *cobra.Command {
	var ttl time.Duration
	cmd := a.writeCmd("expire --stream S --ttl DURATION", "Make a stream expire a duration from now; print its metadata after",
		func(stream string) recordstore.BatchEntry {
			return recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: stream, TTL: ttl}
		}, nil)
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "time to live from now, like 90s or 24h; must be positive (required)")
	_ = cmd.MarkFlagRequired("ttl")
	return cmd
}

func (a *app) trimCmd() *cobra.Command {
	var before timeValue
	cmd := a.writeCmd("trim --stream S --before RFC3339", "Drop the rows appended before a time; print the stream's metadata after",
		func(stream string) recordstore.BatchEntry {
			return recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: stream, Before: before.t}
		}, nil)
	cmd.Flags().Var(&before, "before", "drop the rows of appends made before this RFC 3339 time (required)")
	_ = cmd.MarkFlagRequired("before")
	return cmd
}

func (a *app) streamsCmd() *cobra.Command {
	var kind string
	cmd := &cobra.Command{
		Use:   "streams [--kind K]",
		Short: "Print the metadata of every live stream, one per line",
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if kind != "" {
				if err := recordstore.ValidateKindName(kind); err != nil {
					return err
				}
			}
			return a.reading(ctx, func(st *records.Store) error {
				metas, err := st.Backend().Streams(ctx, kind)
				if err != nil {
					return err
				}
				p := newPrinter(a.env.Stdout)
				for _, m := range metas {
					if err := p.line(m); err != nil {
						return err
					}
				}
				return p.flush()
			})
		}),
	}
	cmd.Flags().StringVar(&kind, "kind", "", "only streams of this kind")
	return cmd
}
