// query append: appending NDJSON rows to a stream in one all-or-nothing
// append.

package cli

import (
	"context"
	"encoding/json"
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
	in, err := a.readRows(src)
	if err != nil {
		return err
	}
	return a.quietly(ctx, func(b recordstore.Backend) error {
		if err := checkRows(ctx, b, kind, in); err != nil {
			return err
		}
		res, err := b.Append(ctx, stream, kind, in.rows)
		if err != nil {
			return err
		}
		return a.printOne(res)
	})
}

// checkRows normalizes every row against its kind, and looks for a key
// given twice, before appending, so that a bad row is reported by its input
// line rather than its index. The backend checks again; this only makes the
// message point at the input.
func checkRows(ctx context.Context, b recordstore.Backend, kind string, in rowsInput) error {
	k, err := b.Kind(ctx, kind)
	if err != nil {
		return err
	}
	keyIdx := k.KeyIndexes()
	seen := map[string]int{} // key of a row -> its line
	for i, row := range in.rows {
		vals, err := k.Normalize(row)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", in.name, in.lines[i], err)
		}
		if len(keyIdx) == 0 {
			continue
		}
		key := keyOf(vals, keyIdx)
		if first, dup := seen[key]; dup {
			return recordstore.Invalidf("%s lines %d and %d: kind %s: the same key %s", in.name, first, in.lines[i], k.Name, key)
		}
		seen[key] = in.lines[i]
	}
	return nil
}

// keyOf renders the key columns of normalized values (nil, string, int64
// or float64) as JSON, which tells any two different keys apart.
func keyOf(vals recordstore.Values, keyIdx []int) string {
	key := make([]any, len(keyIdx))
	for j, i := range keyIdx {
		key[j] = vals[i]
	}
	b, _ := json.Marshal(key)
	return string(b)
}

// readRows decodes the rows of src, a file path or "-" for stdin.
func (a *app) readRows(src string) (rowsInput, error) {
	var r io.Reader = a.env.Stdin
	name := "stdin"
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return rowsInput{}, inputErr(src, err)
		}
		defer f.Close()
		r, name = f, src
	}
	return decodeNDJSON(r, name)
}
