// query scan: printing the rows of a stream, and following it with --follow.

package cli

import (
	"context"
	"errors"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

func (a *app) scanCmd() *cobra.Command {
	var (
		f      scanFlags
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "scan --stream S [--after SEQ] [--to SEQ] [--from T] [--until T] [--q TEXT] [--where FILTER]... [--sort COL] [--limit N] [--format F] [--csv-guard] [--out FILE [--force]] [--follow]",
		Short: "Print the rows of a stream, one JSON object per line",
		Long: `Print the rows of a stream with seq > --after, in seq order, one JSON
object per line: the row's columns plus "_seq".

The query flags select and order the rows (docs/reading.md): --to (last
seq), --from/--until (a time window on the kind's time column), --q (a
case-insensitive search of its search columns), --where COL=VALUE (and
!= < <= > >= ~, repeatable), --sort COL or -COL (an indexed column),
--page-size/--cursor (one page; the next cursor is printed on stderr as
"next-cursor: C"). --format ndjson|csv|parquet, --out FILE writes a new
file whole or not at all (a progress bar on stderr when it is a terminal):
an existing path is refused (exists) unless --force, which replaces a
regular file only; a missing folder is not_found, a folder invalid;
--out - is stdout. --csv-guard puts a ' before each text cell that starts
with = + - @ tab or CR, so that a spreadsheet does not run it as a
formula (numbers are left as they are).

With --follow, keep printing the rows the query flags select as they are
appended until the stream is sealed (exit 0), the row at --to was passed,
--limit rows were printed, or SIGINT/SIGTERM (exit 0).
A stream that does not exist yet is waited for.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if f.after < 0 {
				return usagef("--after must not be negative")
			}
			if f.limit < 0 {
				return usagef("--limit must not be negative")
			}
			if follow {
				if f.pagingFlagsSet(cmd) {
					return usagef("--follow prints rows in seq order as they arrive: --sort, --page-size, --cursor, --format, --csv-guard, --out and --force do not apply")
				}
				return a.follow(cmd.Context(), &f)
			}
			return a.scanQuery(cmd.Context(), &f)
		}),
	}
	fl := cmd.Flags()
	f.register(fl)
	fl.BoolVar(&follow, "follow", false, "keep printing new rows until the stream is sealed or a signal arrives")
	_ = cmd.MarkFlagRequired("stream")
	return cmd
}

// follow prints the rows the query selects as they arrive, until the
// stream is sealed or gone, --to is passed, --limit rows were printed, or
// ctx ends (a signal): each is a clean exit.
func (a *app) follow(ctx context.Context, f *scanFlags) error {
	if err := recordstore.ValidateStreamID(f.stream); err != nil {
		return err
	}
	q, err := f.query()
	if err != nil {
		return err
	}
	return a.reading(ctx, func(st *records.Store) error {
		p := newPrinter(a.env.Stdout)
		err := recordresults.NewReader(st.Backend()).Follow(ctx, q, func(r recordstore.Record) error {
			if err := p.line(r); err != nil {
				return err
			}
			return p.flush()
		})
		return errors.Join(err, p.flush())
	})
}
