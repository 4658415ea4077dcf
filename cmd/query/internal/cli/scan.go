// query scan: printing the rows of a stream, and following it with --follow.

package cli

import (
	"context"
	"errors"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/spf13/cobra"
)

func (a *app) scanCmd() *cobra.Command {
	var (
		stream string
		after  int64
		limit  int
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "scan --stream S [--after SEQ] [--limit N] [--follow]",
		Short: "Print the rows of a stream, one JSON object per line",
		Long: `Print the rows of a stream with seq > --after, in seq order, one JSON
object per line: the row's columns plus "_seq".

With --follow, keep printing rows as they are appended until the stream
is sealed (exit 0), --limit rows were printed, or SIGINT/SIGTERM (exit 0).
A stream that does not exist yet is waited for.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if after < 0 {
				return usagef("--after must not be negative")
			}
			if limit < 0 {
				return usagef("--limit must not be negative")
			}
			if follow {
				return a.follow(cmd.Context(), stream, after, limit)
			}
			return a.scan(cmd.Context(), stream, after, limit)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&stream, "stream", "", "stream to read (required)")
	f.Int64Var(&after, "after", 0, "print rows with seq greater than this")
	f.IntVar(&limit, "limit", 0, "print at most this many rows (0: no limit)")
	f.BoolVar(&follow, "follow", false, "keep printing new rows until the stream is sealed or a signal arrives")
	_ = cmd.MarkFlagRequired("stream")
	return cmd
}

// scan prints the rows after seq after, a page at a time so that a large
// stream is never held in memory.
func (a *app) scan(ctx context.Context, stream string, after int64, limit int) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	return a.reading(ctx, func(st *recordresults.Store) error {
		p := newPrinter(a.env.Stdout)
		err := scanPages(ctx, st.Backend(), stream, after, limit, p.line)
		return errors.Join(err, p.flush())
	})
}

// scanPages calls emit for each row of stream after seq after, at most
// limit of them (0: all), reading recordstore.TailPage rows per scan.
func scanPages(ctx context.Context, b recordstore.Backend, stream string, after int64, limit int, emit func(any) error) error {
	for left := limit; ; {
		page := recordstore.TailPage
		if limit > 0 && left < page {
			page = left
		}
		recs, err := b.Scan(ctx, stream, recordstore.ScanOptions{After: after, Limit: page})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := emit(r); err != nil {
				return err
			}
			after = r.Seq
		}
		left -= len(recs)
		if len(recs) < page || (limit > 0 && left == 0) {
			return nil
		}
	}
}

// errLimitReached stops a follow once --limit rows were printed.
var errLimitReached = errors.New("limit reached")

// follow prints rows as they arrive until the stream is sealed, limit rows
// were printed, or ctx ends (a signal): all three are a clean exit.
func (a *app) follow(ctx context.Context, stream string, after int64, limit int) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	return a.reading(ctx, func(st *recordresults.Store) error {
		p := newPrinter(a.env.Stdout)
		printed := 0
		err := recordstore.Tail(ctx, st.Backend(), stream, after, func(r recordstore.Record) error {
			if err := p.line(r); err != nil {
				return err
			}
			if err := p.flush(); err != nil {
				return err
			}
			printed++
			if limit > 0 && printed >= limit {
				return errLimitReached
			}
			return nil
		})
		if errors.Is(err, errLimitReached) || ctx.Err() != nil {
			err = nil
		}
		return errors.Join(err, p.flush())
	})
}
