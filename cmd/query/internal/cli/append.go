// query append: appending NDJSON rows to a stream in one all-or-nothing
// append. The input is read a line at a time and every row is checked
// against the kind as it is read; only the decoded rows are kept for the
// append itself.

package cli

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
	"github.com/spf13/cobra"
)

func (a *app) appendCmd() *cobra.Command {
	var stream, kind string
	format := newEnum("ndjson", "ndjson")
	cmd := &cobra.Command{
		Use:   "append --stream S --kind K [--format ndjson] [FILE|-]",
		Short: "Append the rows of an NDJSON file (or stdin) to a stream",
		Long: `Append the rows of an NDJSON file (or stdin, also when FILE is omitted)
to a stream, creating the stream on first use. One JSON object per line;
blank lines are skipped. The rows go in as one append: when any row is bad,
nothing is appended.

Prints {"stream","kind","from","to","appended","skipped","replaced"}.`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			src := "-"
			if len(args) == 1 {
				src = args[0]
			}
			return a.appendRows(cmd.Context(), stream, kind, src)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&stream, "stream", "", "stream to append to (required)")
	f.StringVar(&kind, "kind", "", "kind of the rows (required)")
	f.Var(&format, "format", "input format: ndjson")
	_ = cmd.MarkFlagRequired("stream")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func (a *app) appendRows(ctx context.Context, stream, kind, src string) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if err := recordstore.ValidateKindName(kind); err != nil {
		return err
	}
	r, name, closeInput, err := a.openInput(src)
	if err != nil {
		return err
	}
	defer closeInput()
	return a.quietly(ctx, func(b recordstore.Backend) error {
		k, err := b.Kind(ctx, kind)
		if err != nil {
			return err
		}
		var rows []recordstore.Row
		keep := func(row recordstore.Row, _ recordstore.Values) { rows = append(rows, row) }
		if err := readRows(newRowReader(r, name), &k, 0, keep); err != nil {
			return err
		}
		res, err := b.Append(ctx, stream, kind, rows)
		if err != nil {
			return err
		}
		return a.printOne(res)
	})
}
