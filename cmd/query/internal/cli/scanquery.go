// query scan's query flags: the read side's query model (docs/reading.md)
// from flags, and the export of its rows to stdout or a file.

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// scanFlags are the flags of query scan.
type scanFlags struct {
	stream, from, until, text, sort, cursor, format string
	after, to                                       int64
	limit, pageSize                                 int
	where                                           []string
	out                                             outFlags
	csvGuard                                        bool
}

// pagingFlags are the flags --follow does not take.
var pagingFlags = []string{"sort", "page-size", "cursor", "format", "out", "force", "csv-guard"}

func (f *scanFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.stream, "stream", "", "stream to read (required)")
	fl.Int64Var(&f.after, "after", 0, "print rows with seq greater than this")
	fl.Int64Var(&f.to, "to", 0, "print rows with seq up to this (0: no bound)")
	fl.StringVar(&f.from, "from", "", "rows whose time column is at or after this RFC 3339 datetime")
	fl.StringVar(&f.until, "until", "", "rows whose time column is before this RFC 3339 datetime")
	fl.StringVar(&f.text, "q", "", "rows whose search columns contain this text (case-insensitive)")
	fl.StringArrayVar(&f.where, "where", nil, "a column filter COL=VALUE (or != < <= > >= ~); repeatable, all must hold")
	fl.StringVar(&f.sort, "sort", "", "order by this indexed column (-COL: descending); default _seq")
	fl.IntVar(&f.limit, "limit", 0, "print at most this many rows (0: no limit)")
	fl.IntVar(&f.pageSize, "page-size", 0, "print one page of this many rows (max 1000); the next cursor goes to stderr")
	fl.StringVar(&f.cursor, "cursor", "", "print the page this cursor (from an earlier page) starts")
	fl.StringVar(&f.format, "format", "ndjson", "output format: ndjson, csv or parquet")
	f.out.register(fl)
	fl.BoolVar(&f.csvGuard, "csv-guard", false, "with --format csv, put a ' before each text cell starting with = + - @ tab or CR (spreadsheet formula injection)")
}

// pagingFlagsSet reports whether any flag --follow does not take was given.
func (f *scanFlags) pagingFlagsSet(cmd *cobra.Command) bool {
	for _, name := range pagingFlags {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// query returns the flags as a Query; a malformed value is ErrInvalid.
func (f *scanFlags) query() (recordresults.Query, error) {
	q := recordresults.Query{Stream: f.stream, After: f.after, To: f.to, Text: f.text, Sort: f.sort,
		Limit: f.limit, PageSize: f.pageSize, Cursor: f.cursor}
	for name, s := range map[string]string{"from": f.from, "until": f.until} {
		if s == "" {
			continue
		}
		t, err := recordstore.ParseDatetime(s)
		if err != nil {
			return q, recordstore.Invalidf("--%s %s: want an RFC 3339 datetime like 2026-12-01T10:00:00Z", name, recordstore.Quote(s))
		}
		if name == "from" {
			q.From = t
		} else {
			q.Until = t
		}
	}
	for _, w := range f.where {
		flt, err := recordresults.ParseFilter(w)
		if err != nil {
			return q, err
		}
		q.Where = append(q.Where, flt)
	}
	return q, nil
}

// scanGCPercent is the collector's target while scan exports NDJSON or
// CSV: a scan's garbage is the values it decodes for each row and the
// output of each page (at most a few MiB, written out between pages), so
// its live heap stays small, and collecting a fourth as often saved about
// 15% of the processor time of a scan of small rows (measured when a scan
// still made a record per row) for about 20 MB more peak memory. Not for Parquet, whose row group buffered whole would
// take four times its size. GOGC in the environment, when set, is left in
// charge.
const scanGCPercent = 400

// scanQuery prints (or writes to --out) the rows of the query the flags
// describe.
func (a *app) scanQuery(ctx context.Context, f *scanFlags) error {
	if err := recordstore.ValidateStreamID(f.stream); err != nil {
		return err
	}
	q, err := f.query()
	if err != nil {
		return err
	}
	format, err := recordresults.ParseFormat(f.format)
	if err != nil {
		return err
	}
	if f.out.toStdout() && format == recordresults.FormatParquet && isTerminal(a.env.Stdout) {
		return usagef("--format parquet writes binary: give --out FILE or redirect stdout")
	}
	if f.csvGuard && format != recordresults.FormatCSV {
		return usagef("--csv-guard applies to --format csv only")
	}
	if err := f.out.check(); err != nil {
		return err
	}
	if format != recordresults.FormatParquet && a.env.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(scanGCPercent))
	}
	return a.reading(ctx, func(st *records.Store) error {
		rd := recordresults.NewReader(st.Backend())
		return f.out.write(a.env.Stdout, func(w io.Writer) error {
			o := recordresults.ExportOptions{Format: format, CSVGuard: f.csvGuard}
			return a.exportTo(ctx, rd, w, q, o, f.pageSize > 0 || f.cursor != "")
		})
	})
}

// exportTo writes the query's rows, or one page of them, to w.
func (a *app) exportTo(ctx context.Context, rd *recordresults.Reader, w io.Writer, q recordresults.Query, o recordresults.ExportOptions, paged bool) error {
	if paged {
		next, _, err := rd.ExportPageWith(ctx, w, q, o)
		if err == nil && next != "" {
			fmt.Fprintf(a.env.Stderr, "next-cursor: %s\n", next)
		}
		return err
	}
	bar := a.progress(ctx, rd, q)
	o.Progress = func(n int64) {
		if bar != nil {
			_ = bar.Set64(n)
		}
	}
	_, err := rd.ExportWith(ctx, w, q, o)
	if bar != nil {
		_ = bar.Finish()
	}
	return err
}

// progress returns a progress bar on stderr when stderr is a terminal (nil
// otherwise), sized by the stream's row count or the limit.
func (a *app) progress(ctx context.Context, rd *recordresults.Reader, q recordresults.Query) *progressbar.ProgressBar {
	if !isTerminal(a.env.Stderr) {
		return nil
	}
	total := int64(-1)
	if m, err := rd.Backend().Meta(ctx, q.Stream); err == nil {
		total = m.Total
	}
	if q.Limit > 0 && (total < 0 || int64(q.Limit) < total) {
		total = int64(q.Limit)
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(a.env.Stderr),
		progressbar.OptionSetDescription("rows"),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100_000_000), // 100ms
		progressbar.OptionClearOnFinish(),
	)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
