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
		part   string
	)
	cmd := &cobra.Command{
		Use:   "export --stream S --to URL|DIR [--format parquet] [--since SEQ] [--rows-per-file N] [--partition-by COLUMN[:hour|day|month]]",
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
seqs. --partition-by COLUMN[:UNIT] (a datetime column of the stream's
kind; UNIT hour, day or month, day by default) splits each file's rows
by the column's UTC value truncated to UNIT:

  stream=S/generation=G/COLUMN_UNIT=VALUE/part-FROM-TO.parquet

VALUE is 2026-12-02 (day), 2026-12-02T13 (hour) or 2026-12 (month);
rows whose column is null go to __HIVE_DEFAULT_PARTITION__. A
destination keeps the partitioning of its first export: a run with
another one (or none) fails schema_conflict and writes nothing; rows
added later go to new files, also for days that already have files.
A run that dies leaves at most one file the manifest does not name,
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
			var by lake.Partitioning
			if cmd.Flags().Changed("partition-by") {
				var err error
				if by, err = lake.ParsePartitioning(part); err != nil {
					return usagef("--partition-by: %v", err)
				}
			}
			ctx := cmd.Context()
			sink, err := lake.OpenSink(ctx, to)
			if err != nil {
				return err
			}
			return a.reading(ctx, func(st *records.Store) error {
				rep, err := lake.Export(ctx, recordresults.NewReader(st.Backend()), stream, sink,
					lake.Options{RowsPerFile: rows, Since: since, PartitionBy: by, Logger: a.logger(slog.LevelWarn)})
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
	fl.StringVar(&part, "partition-by", "", "split files by a datetime column: COLUMN or COLUMN:hour|day|month (default seq ranges only)")
	return cmd
}
