// query append: appending NDJSON rows to a stream in one all-or-nothing
// append.

package cli

import (
	"context"
	"fmt"
	"io"
	"os"

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
	rows, err := a.readRows(src)
	if err != nil {
		return err
	}
	return a.quietly(ctx, func(b recordstore.Backend) error {
		res, err := b.Append(ctx, stream, kind, rows)
		if err != nil {
			return fmt.Errorf("append to stream %s: %w", stream, err)
		}
		return a.printOne(res)
	})
}

// readRows decodes the rows of src, a file path or "-" for stdin.
func (a *app) readRows(src string) ([]recordstore.Row, error) {
	var r io.Reader = a.env.Stdin
	name := "stdin"
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return nil, inputErr(src, err)
		}
		defer f.Close()
		r, name = f, src
	}
	return decodeNDJSON(r, name)
}
