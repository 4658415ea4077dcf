// query export: a stream's new rows as Parquet files with a manifest, to a
// folder or S3-compatible storage (recordstore/lake).

package cli

import (
	"log/slog"

	"github.com/fb46ecde/records/recordstore/lake"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

func (a *app) exportCmd() *cobra.Command {
	var (
		stream string
		to     string
		format string
		since  int64
		rows   int64
	)
	cmd := &cobra.Command{
		Use:   "export --stream S --to URL|DIR [--format parquet] [--since SEQ] [--rows-per-file N]",
		Short: "Export a stream's new rows as Parquet files with a manifest, to a folder or S3",
		Long: `Export the rows of a stream that the destination does not hold yet as
append-only Parquet files, with a manifest, for engines that read a data
lake (DuckDB: read_parquet('DIR/**/*.parquet', hive_partitioning=true)).

--to is a folder (made 0700 when missing), file:///folder, or
s3://BUCKET/PREFIX?endpoint=URL&region=R&forcePathStyle=true; S3
credentials come from the environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...), never from the address. Files:

  stream=S/_manifest.json
  stream=S/generation=G/part-FROM-TO.parquet   (an _seq column first)

Running it again exports only rows appended since; --since SEQ starts a
stream's first export after SEQ. Each file holds at most --rows-per-file
seqs. A run that dies leaves at most one file the manifest does not name,
removed by the next run. Prints the run's report as one JSON object.
Another export of the same stream to the same place at once: busy.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			switch {
			case stream == "":
				return usagef("--stream is required")
			case to == "":
				return usagef("--to is required")
			case format != "parquet":
				return usagef("--format %s: only parquet", format)
			case since < 0:
				return usagef("--since must not be negative")
			case rows < 1:
				return usagef("--rows-per-file must be at least 1")
			}
			ctx := cmd.Context()
			sink, err := lake.OpenSink(ctx, to)
			if err != nil {
				return err
			}
			return a.reading(ctx, func(st *records.Store) error {
				rep, err := lake.Export(ctx, recordresults.NewReader(st.Backend()), stream, sink,
					lake.Options{RowsPerFile: rows, Since: since, Logger: a.logger(slog.LevelWarn)})
				if err != nil {
					return err
				}
				p := newPrinter(a.env.Stdout)
				if err := p.line(rep); err != nil {
					return err
				}
				return p.flush()
			})
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&stream, "stream", "", "the stream to export")
	fl.StringVar(&to, "to", "", "destination: a folder, file:///folder or s3://BUCKET/PREFIX?endpoint=…")
	fl.StringVar(&format, "format", "parquet", "file format: parquet")
	fl.Int64Var(&since, "since", 0, "on a stream's first export, skip rows with seq <= SEQ")
	fl.Int64Var(&rows, "rows-per-file", lake.DefaultRowsPerFile, "at most this many seqs per file")
	return cmd
}
