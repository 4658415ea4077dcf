// query view run / query view check: named SQL views over a stream window,
// read from a views file.

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

func (a *app) viewCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Check and run named SQL views over a stream window",
		Args:  cobra.NoArgs,
		RunE:  needSubcommand,
	}
	cmd.AddCommand(a.viewRunCmd(), a.viewCheckCmd())
	return cmd
}

func (a *app) viewRunCmd() *cobra.Command {
	var (
		file, stream, format string
		after, to            int64
		limit                int
		csvGuard             bool
		out                  outFlags
	)
	cmd := &cobra.Command{
		Use:   "run NAME --views FILE --stream S [--after SEQ] [--to SEQ] [--limit N] [--format ndjson|csv [--csv-guard]] [--out FILE [--force]]",
		Short: "Print the rows of a view over a stream window",
		Long: `Print the rows of view NAME of a {"views": [...]} file over the rows of
stream S with --after < seq <= --to: NDJSON objects (keys in the view's
column order) or CSV. The view is compiled first: SQL that is not one
SELECT over "rows" is refused (invalid) before anything is read.
--csv-guard puts a ' before each text cell that starts with = + - @ tab or
CR, as scan's does (integer, real and empty cells are left as they are).`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if after < 0 || to < 0 || limit < 0 {
				return usagef("--after, --to and --limit must not be negative")
			}
			if err := recordstore.ValidateStreamID(stream); err != nil {
				return err
			}
			f, err := recordresults.ParseFormat(format)
			if err != nil {
				return err
			}
			if csvGuard && f != recordresults.FormatCSV {
				return usagef("--csv-guard applies to --format csv only")
			}
			views, err := readViewFile(file)
			if err != nil {
				return err
			}
			if err := out.check(); err != nil {
				return err
			}
			q := recordresults.ViewQuery{Stream: stream, After: after, To: to, Limit: limit}
			return a.reading(cmd.Context(), func(st *records.Store) error {
				rd, err := registerViews(cmd.Context(), st, views)
				if err != nil {
					return err
				}
				write := func(w io.Writer) error {
					_, err := rd.ExportViewWith(cmd.Context(), w, args[0], q, recordresults.ExportOptions{Format: f, CSVGuard: csvGuard})
					return err
				}
				if !out.toStdout() {
					return out.write(a.env.Stdout, write)
				}
				// Whole or nothing on stdout too: a run that fails prints no rows.
				var buf bytes.Buffer
				if err := write(&buf); err != nil {
					return err
				}
				_, err = a.env.Stdout.Write(buf.Bytes())
				return err
			})
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "views", "", `views file, {"views":[{"name":..,"kind":..,"sql":..}]} (required)`)
	fl.StringVar(&stream, "stream", "", "stream whose rows the view reads (required)")
	fl.Int64Var(&after, "after", 0, "the window's rows have seq greater than this")
	fl.Int64Var(&to, "to", 0, "the window's rows have seq up to this (0: no bound)")
	fl.IntVar(&limit, "limit", 0, "print at most this many rows (0: all)")
	fl.StringVar(&format, "format", "ndjson", "output format: ndjson or csv")
	fl.BoolVar(&csvGuard, "csv-guard", false, "with --format csv, put a ' before each text cell starting with = + - @ tab or CR (spreadsheet formula injection)")
	out.register(fl)
	_ = cmd.MarkFlagRequired("views")
	_ = cmd.MarkFlagRequired("stream")
	return cmd
}

func (a *app) viewCheckCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "check --views FILE",
		Short: "Compile every view of a views file and print each with its columns",
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			views, err := readViewFile(file)
			if err != nil {
				return err
			}
			return a.reading(cmd.Context(), func(st *records.Store) error {
				rd, err := registerViews(cmd.Context(), st, views)
				if err != nil {
					return err
				}
				p := newPrinter(a.env.Stdout)
				for _, v := range rd.Views() {
					if err := p.line(v); err != nil {
						return err
					}
				}
				return p.flush()
			})
		}),
	}
	cmd.Flags().StringVar(&file, "views", "", "views file (required)")
	_ = cmd.MarkFlagRequired("views")
	return cmd
}

// readViewFile reads a {"views": [...]} file; a malformed one is invalid.
func readViewFile(path string) ([]recordresults.View, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, recordstore.Invalidf("views file %s: %v", path, err)
	}
	var vf recordresults.ViewFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&vf); err != nil {
		return nil, recordstore.Invalidf("views file %s: %v", path, err)
	}
	if len(vf.Views) == 0 {
		return nil, recordstore.Invalidf("views file %s: no views", path)
	}
	return vf.Views, nil
}

// registerViews compiles views on a Reader over st's backend.
func registerViews(ctx context.Context, st *records.Store, views []recordresults.View) (*recordresults.Reader, error) {
	rd := recordresults.NewReader(st.Backend())
	for _, v := range views {
		if _, err := rd.RegisterView(ctx, v); err != nil {
			return nil, fmt.Errorf("views file: %w", err)
		}
	}
	return rd, nil
}
