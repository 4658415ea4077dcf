// query spool publish: handing rows to the store's owner as one spool
// batch, without opening the live database for writing and without any
// lock.

package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/spf13/cobra"
)

// published is the output of spool publish.
type published struct {
	Batch  string `json:"batch"`
	Path   string `json:"path"`
	Rows   int    `json:"rows"`
	Format string `json:"format"`
}

// publishArgs are the flags and argument of spool publish.
type publishArgs struct {
	stream, kind, schema, src string
	format                    enumValue
}

func (a *app) spoolPublishCmd() *cobra.Command {
	p := publishArgs{format: newEnum(spool.FormatNDJSON, spool.FormatNDJSON, spool.FormatNDJSONGz, parquet.Name)}
	cmd := &cobra.Command{
		Use:   "publish --stream S --kind K [--format ndjson|ndjson.gz|parquet] [--schema FILE] [FILE|-]",
		Short: "Publish NDJSON rows (a file or stdin) as one append batch into the spool",
		Long: `Publish the rows of an NDJSON file (or stdin, also when FILE is omitted)
as one spool batch appending them to stream S, and exit. The store's owner
ingests the batch; publishing neither opens the live database for writing
nor takes any lock, so it works whether or not an owner runs.

Every row is checked against kind K first: when any row is bad, nothing is
published. The kind's declaration is read from --schema, a kind file
({"kinds": [...]}) that declares K, or else from the store's catalog
(opened read-only: the store must exist and declare K). When the store's
owner runs a build of another catalog version, this build cannot read the
catalog: it fails with catalog_version, and --schema is needed.
--format is the codec of the batch's data file (the input is NDJSON).

Prints {"batch","path","rows","format"}.`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			p.src = "-"
			if len(args) == 1 {
				p.src = args[0]
			}
			if err := schemaFromStdin(p.schema, p.src); err != nil {
				return err
			}
			return a.spoolPublish(cmd.Context(), p)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&p.stream, "stream", "", "stream to append to (required)")
	f.StringVar(&p.kind, "kind", "", "kind of the rows (required)")
	f.Var(&p.format, "format", "codec of the batch's data file: ndjson, ndjson.gz or parquet")
	f.StringVar(&p.schema, "schema", "", `kind file ({"kinds": [...]}) declaring the kind; default: the store's catalog`)
	_ = cmd.MarkFlagRequired("stream")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func (a *app) spoolPublish(ctx context.Context, p publishArgs) error {
	if err := recordstore.ValidateStreamID(p.stream); err != nil {
		return err
	}
	if err := recordstore.ValidateKindName(p.kind); err != nil {
		return err
	}
	kind, err := a.publishKind(ctx, p.kind, p.schema)
	if err != nil {
		return err
	}
	dir, err := a.openSpool(ctx)
	if err != nil {
		return err
	}
	r, name, closeInput, err := a.openInput(p.src)
	if err != nil {
		return err
	}
	defer closeInput()
	// The checked rows wait in a scratch file beside the spool, as query
	// append's do, and stream from it into the batch's data file.
	rows, err := newSpill(filepath.Dir(dir.Root()))
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	if _, err := readRows(newRowReader(r, name), kind, dir.Limits(), rows.Add); err != nil {
		return err
	}
	id := spool.NewIdentity("query " + buildVersion().Version)
	b := &recordstore.Batch{
		ID:       spool.NewID(),
		Producer: id.Producer(id.Next()),
		Created:  time.Now().UTC(),
		Schemas:  []recordstore.Kind{*kind},
		Entries:  []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: p.stream, Kind: kind.Name, Source: rows.Source()}},
	}
	batch, err := dir.Publish(ctx, b, p.format.value)
	if err != nil {
		return err
	}
	return a.printOne(published{Batch: batch.String(), Path: dir.Path(spool.StateIncoming, batch.String()),
		Rows: rows.Len(), Format: p.format.value})
}

// publishKind returns the declaration of kind name: from the kind file
// schema when one is given, else from the store's catalog.
func (a *app) publishKind(ctx context.Context, name, schema string) (*recordstore.Kind, error) {
	if schema == "" {
		return a.catalogKind(ctx, name)
	}
	return a.schemaKind(name, schema)
}

// catalogKind reads the declaration of kind name from the store's catalog
// through a read-only open: only the reader pool, no lock, no write. A
// store whose live file does not exist yet, and a kind it does not
// declare, are ErrNotFound. A store whose owner (per its state file, even
// one left by a crash) runs a build of another catalog version keeps its
// live data in that version's file, which this build does not read: that
// is an owner.CatalogVersionError, and the caller must pass --schema.
func (a *app) catalogKind(ctx context.Context, name string) (*recordstore.Kind, error) {
	if a.storePath != "" {
		st, err := owner.ReadState(owner.PathsFor(a.storePath).State)
		if err == nil && st.CatalogVersion != 0 && st.CatalogVersion != sqlite.CatalogVersion {
			cv := &owner.CatalogVersionError{Owner: st.CatalogVersion, Build: sqlite.CatalogVersion}
			return nil, fmt.Errorf("kind %s cannot be read from the catalog; pass --schema FILE declaring it: %w", name, cv)
		}
	}
	var kind recordstore.Kind
	err := a.readCatalog(ctx, func(b recordstore.Backend) error {
		var err error
		kind, err = b.Kind(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &kind, nil
}
