// query kind apply / query kind list: declaring and listing kinds.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/spf13/cobra"
)

func (a *app) kindCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kind",
		Short: "Declare and list kinds",
		Args:  cobra.NoArgs,
		RunE:  needSubcommand,
	}
	cmd.AddCommand(a.kindApplyCmd(), a.kindListCmd(), a.kindSearchIndexCmd())
	return cmd
}

func (a *app) kindApplyCmd() *cobra.Command {
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   "apply FILE|- [--no-wait | --timeout D]",
		Short: `Declare or additively reconcile the kinds of a {"kinds": [...]} file`,
		Long: `Declare or additively reconcile the kinds of a {"kinds": [...]} file.

Every kind in the file is checked against the store first; when one is
invalid or conflicts with its stored declaration nothing is declared.
A build whose catalog version differs from the store owner's cannot read
the catalog: it checks each kind alone, and the owner reconciles them one
by one, so a conflict stops at that kind and the ones before it stay
declared.
Prints one line per kind: {"name":..., "status":"created"|"unchanged"|"updated"}.

When another process owns the store, each declaration goes through the
spool and the command waits for the owner's answer: --timeout bounds the
wait (when it runs out the command fails with code pending and the batch
id, and the batch is still applied, once). With --no-wait every kind goes
in one batch and the command prints {"batch":...,"pending":true} as soon
as it is in the spool; "query await BATCH" prints its outcome later.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := wait.check(); err != nil {
				return err
			}
			return a.kindApply(cmd.Context(), args[0], wait)
		}),
	}
	wait.register(cmd.Flags())
	return cmd
}

func (a *app) kindListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Print every declared kind, one JSON object per line",
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			return a.kindList(cmd.Context())
		}),
	}
}

// kindStatusLine is the output line of kind apply.
type kindStatusLine struct {
	Name   string                 `json:"name"`
	Status recordstore.KindStatus `json:"status"`
}

func (a *app) kindApply(ctx context.Context, src string, wait waitFlags) error {
	file, err := a.readKindFile(src)
	if err != nil {
		return err
	}
	return a.quietly(ctx, func(st *records.Store) error {
		actx, cancel := wait.bound(ctx)
		defer cancel()
		res, err := st.DeclareKinds(actx, file.Kinds, wait.options())
		p := newPrinter(a.env.Stdout)
		if res.Pending {
			return errors.Join(err, p.line(recordresults.PendingBatch{Batch: res.Batch, Pending: true}), p.flush())
		}
		for i, status := range res.Statuses { // the kinds declared, also before an error
			if perr := p.line(kindStatusLine{Name: file.Kinds[i].Name, Status: status}); perr != nil {
				return errors.Join(err, perr)
			}
		}
		return errors.Join(err, p.flush())
	})
}

// schemaKind returns the declaration of kind name from the kind file
// schema (a path, or "-" for stdin), validated: the --schema flag of
// append and spool publish. A file that is malformed, or does not declare
// name, is ErrInvalid.
func (a *app) schemaKind(name, schema string) (*recordstore.Kind, error) {
	file, err := a.readKindFile(schema)
	if err != nil {
		return nil, err
	}
	for i := range file.Kinds {
		k := &file.Kinds[i]
		if k.Name != name {
			continue
		}
		if err := k.Validate(); err != nil {
			return nil, fmt.Errorf("kind file %s: %w", schema, err)
		}
		return k, nil
	}
	return nil, recordstore.Invalidf("kind file %s does not declare kind %s", schema, name)
}

// schemaFromStdin refuses --schema - when the rows come from stdin too.
func schemaFromStdin(schema, src string) error {
	if schema == "-" && src == "-" {
		return usagef("--schema - needs the rows in a FILE: both cannot come from stdin")
	}
	return nil
}

func (a *app) kindList(ctx context.Context) error {
	return a.reading(ctx, func(st *records.Store) error {
		kinds, err := st.Backend().Kinds(ctx)
		if err != nil {
			return err
		}
		p := newPrinter(a.env.Stdout)
		for _, k := range kinds {
			if err := p.line(k); err != nil {
				return err
			}
		}
		return p.flush()
	})
}

// readInput reads all of src, a file path or "-" for stdin, and returns it
// with the name errors should use for it.
func (a *app) readInput(src string) ([]byte, string, error) {
	if src == "-" {
		data, err := io.ReadAll(a.env.Stdin)
		if err != nil {
			return nil, "stdin", fmt.Errorf("read stdin: %w", err)
		}
		return data, "stdin", nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, src, inputErr(src, err)
	}
	return data, src, nil
}

// inputErr wraps a failure to open or read an input file; a file that is
// missing or unreadable is the caller's mistake (ErrInvalid).
func inputErr(src string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return recordstore.Errorf(recordstore.ErrInvalid, "read %s: %w", src, err)
	}
	return fmt.Errorf("read %s: %w", src, err)
}
