// query append: appending NDJSON rows to a stream in one all-or-nothing
// append, directly when this process owns the store and through the spool
// otherwise. The input is read a line at a time and every row is checked
// against the kind — the catalog's, or the one --schema declares — and the
// limits of one append as it is read; only its stored values are kept, in
// a scratch file (recordstore.RowSpill), so that the memory of an append
// does not grow with its input, and streamed from there into the append.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/spf13/cobra"
)

// The roles append reports.
const (
	roleOwner   = "owner"   // this process owned the store and applied the rows
	roleSpooled = "spooled" // another process owned it; the rows went through the spool
)

// appendArgs are the flags and argument of append.
type appendArgs struct {
	stream, kind, schema, src string
	format                    enumValue
	wait                      waitFlags
	batchRows                 int64 // > 0: bulk mode, batches of this many rows
	waitReplicated            bool  // --wait-replicated
}

// appended is the output of append: the window written, and how.
type appended struct {
	recordstore.AppendResult
	Role string `json:"role"`
}

func (a *app) appendCmd() *cobra.Command {
	p := appendArgs{format: newEnum("ndjson", "ndjson")}
	cmd := &cobra.Command{
		Use:   "append --stream S --kind K [--schema FILE] [--format ndjson] [--no-wait | --timeout D] [FILE|-]",
		Short: "Append the rows of an NDJSON file (or stdin) to a stream",
		Long: `Append the rows of an NDJSON file (or stdin, also when FILE is omitted)
to a stream, creating the stream on first use. One JSON object per line;
blank lines are skipped. The rows go in as one append: when any row is bad,
nothing is appended.

When no process owns the store, this one applies the rows itself. When
another process owns it (query serve, say), the rows are checked here, go
through the spool, and the owner's exact result comes back: by default the
command waits for it (--timeout bounds the wait; when it runs out the
command fails with code pending and the batch id, and the batch is still
applied, once). With --no-wait it prints {"batch":...,"pending":true} as
soon as the batch is in the spool. Either way "query await BATCH" waits
for that batch's outcome later.

With --schema FILE, a kind file ({"kinds": [...]}, as kind apply reads
it; "-" for stdin when the rows come from FILE) that declares K, the rows
are checked against that declaration, which is then declared (as kind
apply would) before the rows are appended. Without it K must be declared
already, and its declaration is read from the store's catalog. A build whose
catalog version differs from the store owner's cannot read the catalog
(code catalog_version): it can append only with --schema.

One append carries at most what one spool batch may: 1 000 000 rows and
256 MiB of rows written as NDJSON lines. The limits are the same whether
this process applies the rows or the spool carries them: past them the
command fails with code capacity, naming the line, and writes nothing;
--batch-rows appends a larger input.

Prints {"stream","kind","from","to","appended","skipped","replaced","role"};
role is "owner" or "spooled".

With --batch-rows N the input streams instead, for files too large to
hold: the rows are cut into batches of N rows (the last one fewer), each
one append applied all-or-nothing, in order, read and appended as a whole
input is without --batch-rows (directly when this process owns the store,
through the spool otherwise), so that memory does not grow with N either. The file as a whole is then not one append: at a bad row the
rows before it are applied and the command fails naming the line; when a
batch is refused (a key repeated inside it, a sealed stream) the batches
before it stay. Either way the error says
how many rows and batches were applied. Prints the same object, with from
and to spanning every batch, the counts summed, and "batches". --no-wait
does not apply.`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := p.take(args); err != nil {
				return err
			}
			return a.appendRows(cmd.Context(), p)
		}),
	}
	p.register(cmd)
	return cmd
}

// take checks the flags and takes the input file from args (stdin when
// there is none).
func (p *appendArgs) take(args []string) error {
	p.src = "-"
	if len(args) == 1 {
		p.src = args[0]
	}
	if err := p.wait.check(); err != nil {
		return err
	}
	if p.batchRows < 0 {
		return usagef("--batch-rows must not be negative")
	}
	if p.batchRows > 0 && p.wait.noWait {
		return usagef("--batch-rows and --no-wait cannot be used together")
	}
	if p.waitReplicated && p.wait.noWait {
		return usagef("--wait-replicated and --no-wait cannot be used together")
	}
	return schemaFromStdin(p.schema, p.src)
}

// register adds append's flags to cmd: query append's and query fleet
// append's.
func (p *appendArgs) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.stream, "stream", "", "stream to append to (required)")
	f.StringVar(&p.kind, "kind", "", "kind of the rows (required)")
	f.StringVar(&p.schema, "schema", "", `kind file ({"kinds": [...]}) declaring the kind, declared before the append; default: the store's catalog`)
	f.Var(&p.format, "format", "input format: ndjson")
	p.wait.register(f)
	f.BoolVar(&p.waitReplicated, "wait-replicated", false, "return only once the store's replica holds the append (the owner runs with --replica); a wait that fails is not_replicated, the rows staying appended; --timeout bounds it")
	f.Int64Var(&p.batchRows, "batch-rows", 0, "stream the input in batches of N rows, each all-or-nothing (default: one append of every row)")
	_ = cmd.MarkFlagRequired("stream")
	_ = cmd.MarkFlagRequired("kind")
}

// appendInput is append's checked arguments and open input.
type appendInput struct {
	p        appendArgs
	declared *recordstore.Kind // from --schema, or nil
	r        io.Reader
	name     string
}

// openAppend checks the stream, the kind and --schema, and opens the
// input; close releases it.
func (a *app) openAppend(p appendArgs) (in appendInput, close func(), err error) {
	if err := recordstore.ValidateStreamID(p.stream); err != nil {
		return in, nil, err
	}
	if err := recordstore.ValidateKindName(p.kind); err != nil {
		return in, nil, err
	}
	in.p = p
	if p.schema != "" {
		if in.declared, err = a.schemaKind(p.kind, p.schema); err != nil {
			return in, nil, err
		}
	}
	in.r, in.name, close, err = a.openInput(p.src)
	return in, close, err
}

func (a *app) appendRows(ctx context.Context, p appendArgs) error {
	in, closeInput, err := a.openAppend(p)
	if err != nil {
		return err
	}
	defer closeInput()
	return a.quietly(ctx, func(st *records.Store) error { return appendInto(ctx, a, st, in) })
}

// appendInto appends the rows of in to st (a store of --store, or a
// fleet's) and prints the outcome.
func appendInto(ctx context.Context, a *app, st *records.Store, in appendInput) error {
	p := in.p
	defer a.appendGC()()
	k, err := appendKind(ctx, st, p.kind, in.declared)
	if err != nil {
		return err
	}
	if p.batchRows > 0 {
		return appendBatches(ctx, a, st, in, k)
	}
	limits := spool.DefaultLimits // a store opened --read-only has no spool: its append fails read_only
	if sp := st.Spool(); sp != nil {
		limits = sp.Limits()
	}
	rows, err := newSpill(filepath.Dir(st.Paths().Config))
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }() // a scratch file, unlinked already where the system allows
	meter, err := readRows(newRowReader(in.r, in.name), k, limits, rows.Add)
	if err != nil {
		return suggestBatches(err)
	}
	if rows.Size() >= spillCollect {
		// What reading left (a long line's copies) is garbage now: collect
		// it so that the append reuses that memory instead of growing the
		// heap past it while it reads the rows back.
		runtime.GC()
	}
	actx, cancel := p.wait.bound(ctx) // from the first wait for the owner on
	defer cancel()
	wo := p.wait.options()
	wo.Replicated = p.waitReplicated
	res, err := st.AppendBuffer(actx, p.stream, k, rows, owner.AppendOptions{Declare: in.declared, WriteOptions: wo, Metered: meter})
	if err != nil {
		return suggestBatches(err)
	}
	if res.Pending {
		return a.printOne(recordresults.PendingBatch{Batch: res.Batch, Pending: true})
	}
	return a.printOne(appended{AppendResult: res.AppendResult, Role: role(res.Spooled)})
}

// spillCollect is the size of checked rows from which append collects the
// garbage of reading them before it appends them.
const spillCollect = 16 << 20

// appendGCPercent and appendMemoryLimit are the collector's settings
// while append runs. Its live heap is a window of rows (a few MB) whatever
// the input's size, so at the default target the collector runs every few
// MB allocated; at twice the target it runs half as often (about 7% less
// processor time for 1M small rows, about 5 MB more peak RSS), and the
// soft limit keeps the heap from growing past it with the target when the
// live heap is large (a long string value).
const (
	appendGCPercent   = 200
	appendMemoryLimit = 40 << 20
)

// appendGC sets the collector for an append, unless GOGC or GOMEMLIMIT in
// the environment sets it, and returns what puts the settings back.
func (a *app) appendGC() (restore func()) {
	if a.env.Getenv("GOGC") != "" || a.env.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(appendGCPercent)
	limit := debug.SetMemoryLimit(appendMemoryLimit)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// newSpill returns the scratch file append checks every row into before
// anything is written: in dir (the store's folder), or in the temporary
// folder when dir takes no new file (a folder this process may only read).
func newSpill(dir string) (*recordstore.RowSpill, error) {
	rows, err := recordstore.NewRowSpill(dir)
	if err != nil {
		rows, err = recordstore.NewRowSpill("")
	}
	return rows, err
}

// suggestBatches adds to a capacity error (an input too large for one
// append) how to append it anyway.
func suggestBatches(err error) error {
	if errors.Is(err, recordstore.ErrCapacity) {
		return fmt.Errorf("%w; pass --batch-rows N to append it in batches of N rows", err)
	}
	return err
}

// role is the role append reports for a write that went through the spool
// or not.
func role(spooled bool) string {
	if spooled {
		return roleSpooled
	}
	return roleOwner
}

// appendKind returns the kind append checks the rows against: the
// declaration from --schema, once the store finds that declaring it would
// succeed (before any row is read: a conflict is reported as such, not as
// the rows that do not fit), else the catalog's, which a detached process
// cannot read: that error says how to append anyway.
func appendKind(ctx context.Context, st *records.Store, name string, declared *recordstore.Kind) (*recordstore.Kind, error) {
	if declared != nil {
		if _, err := st.Backend().CheckDeclare(ctx, *declared); err != nil {
			return nil, err
		}
		return declared, nil
	}
	k, err := st.Backend().Kind(ctx, name)
	if errors.Is(err, owner.ErrCatalogVersion) {
		return nil, fmt.Errorf("kind %s cannot be read from the catalog; pass --schema FILE declaring it: %w", name, err)
	}
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// bulkAppended is the output of append --batch-rows: the window of every
// batch together, and how many batches there were.
type bulkAppended struct {
	appended
	Batches int `json:"batches"`
}
