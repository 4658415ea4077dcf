// query spool inspect: loading and checking one batch the way the owner
// would before ingesting it, without ingesting it.

package cli

import (
	"context"
	"errors"
	"io"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/spf13/cobra"
)

// inspection is the output of spool inspect.
type inspection struct {
	Batch string `json:"batch"`
	Valid bool   `json:"valid"`
	// Error says why the batch is not valid; null when it is.
	Error *recordstore.BatchError `json:"error"`
	// Manifest is the batch's manifest; null when it cannot be read.
	Manifest *spool.Manifest `json:"manifest"`
}

func (a *app) spoolInspectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "inspect BATCH",
		Short: "Load and check a batch (incoming or failed) without ingesting it",
		Long: `Load a batch of incoming/ or failed/ and check it as the owner would before
ingesting it: the manifest, every data file's size and SHA-256, and every
row against its schema. Nothing is ingested and nothing on disk changes.

Prints {"batch","valid","error","manifest"}; error is {"code","message"}
or null. When the batch is not valid the line is printed all the same,
and the command fails (exit 1) with the same code and message on stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return a.spoolInspect(cmd.Context(), args[0])
		}),
	}
}

func (a *app) spoolInspect(ctx context.Context, name string) error {
	dir, err := a.openSpool(ctx)
	if err != nil {
		return err
	}
	state, err := findBatch(dir, name)
	if err != nil {
		return err
	}
	m, verr := checkBatch(ctx, dir, state, name)
	if verr != nil && recordstore.Code(verr) == recordstore.CodeInternal {
		return verr // not a verdict on the batch: the command itself failed
	}
	if m == nil {
		// The manifest may be readable even when the batch is not valid
		// (a data file is missing, say): show it.
		m, _ = readManifest(dir.Path(state, name))
	}
	out := inspection{Batch: name, Valid: verr == nil, Manifest: m}
	if verr != nil {
		out.Error = &recordstore.BatchError{Code: recordstore.Code(verr), Message: recordstore.Message(verr)}
	}
	if err := a.printOne(out); err != nil {
		return err
	}
	return verr
}

// checkBatch loads batch name of folder state and reads every row of
// every entry, discarding them. It returns the manifest when the batch
// loaded, and the first problem found.
func checkBatch(ctx context.Context, dir *spool.Dir, state spool.State, name string) (*spool.Manifest, error) {
	b, err := dir.Load(ctx, state, name)
	if err != nil {
		return nil, err
	}
	for i := range b.Manifest.Entries {
		if err := readEntry(ctx, b, i); err != nil {
			return b.Manifest, err
		}
	}
	return b.Manifest, nil
}

// readEntry reads the rows of entry i to the end: the reader checks the
// data file's checksum first, then each row and the row count.
func readEntry(ctx context.Context, b *spool.Folder, i int) error {
	r, err := b.Open(ctx, i)
	if err != nil {
		return err
	}
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Close()
		}
		if err != nil {
			return errors.Join(err, r.Close())
		}
	}
}
