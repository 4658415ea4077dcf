// query append: appending NDJSON rows to a stream in one all-or-nothing
// append, directly when this process owns the store and through the spool
// otherwise. The input is read a line at a time and every row is checked
// against the kind — the catalog's, or the one --schema declares — as it is
// read; only the decoded rows are kept for the append itself.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
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
	noWait                    bool
	timeout                   time.Duration
	batchRows                 int64 // > 0: bulk mode, batches of at most this many rows
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

Prints {"stream","kind","from","to","appended","skipped","replaced","role"};
role is "owner" or "spooled".

With --batch-rows N the input streams instead, for files too large to
hold: the rows are cut into batches of at most N rows (and 64 MiB), each
applied all-or-nothing, in order, through the store's bulk Writer (directly
when this process owns the store, through the spool otherwise). The file
as a whole is then not one append: at a bad row the rows before it are
applied and the command fails naming the line; when a batch is refused
(a sealed stream) the batches before it stay. Either way the error says
how many rows and batches were applied. Prints the same object, with from
and to spanning every batch, the counts summed, and "batches". --no-wait
does not apply.`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			p.src = "-"
			if len(args) == 1 {
				p.src = args[0]
			}
			if p.timeout < 0 {
				return usagef("--timeout must not be negative")
			}
			if p.noWait && p.timeout > 0 {
				return usagef("--timeout and --no-wait cannot be used together")
			}
			if p.batchRows < 0 {
				return usagef("--batch-rows must not be negative")
			}
			if p.batchRows > 0 && p.noWait {
				return usagef("--batch-rows and --no-wait cannot be used together")
			}
			if err := schemaFromStdin(p.schema, p.src); err != nil {
				return err
			}
			return a.appendRows(cmd.Context(), p)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&p.stream, "stream", "", "stream to append to (required)")
	f.StringVar(&p.kind, "kind", "", "kind of the rows (required)")
	f.StringVar(&p.schema, "schema", "", `kind file ({"kinds": [...]}) declaring the kind, declared before the append; default: the store's catalog`)
	f.Var(&p.format, "format", "input format: ndjson")
	f.BoolVar(&p.noWait, "no-wait", false, "through the spool, print the batch id instead of waiting for the owner")
	f.DurationVar(&p.timeout, "timeout", 0, "how long to wait for the owner's result, like 5s (default: no limit)")
	f.Int64Var(&p.batchRows, "batch-rows", 0, "stream the input in batches of at most N rows, each all-or-nothing (default: one append of every row)")
	_ = cmd.MarkFlagRequired("stream")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func (a *app) appendRows(ctx context.Context, p appendArgs) error {
	if err := recordstore.ValidateStreamID(p.stream); err != nil {
		return err
	}
	if err := recordstore.ValidateKindName(p.kind); err != nil {
		return err
	}
	var declared *recordstore.Kind
	if p.schema != "" {
		var err error
		if declared, err = a.schemaKind(p.kind, p.schema); err != nil {
			return err
		}
	}
	r, name, closeInput, err := a.openInput(p.src)
	if err != nil {
		return err
	}
	defer closeInput()
	return a.quietly(ctx, func(st *recordresults.Store) error {
		b := st.Backend()
		k, err := appendKind(ctx, st, p.kind, declared)
		if err != nil {
			return err
		}
		if p.batchRows > 0 {
			actx, cancel := withTimeout(ctx, p.timeout) // the declaration's wait and the batches'
			defer cancel()
			if declared != nil {
				if _, err := b.DeclareKind(actx, *declared); err != nil {
					return err
				}
			}
			return a.bulkAppend(actx, st, p, k, newRowReader(r, name))
		}
		owned := st.Role() == owner.RoleOwner
		var maxRows int64
		if !owned && st.Spool() != nil { // none when opened --read-only: the append fails read_only
			maxRows = st.Spool().Limits().MaxRows // one spool batch holds them all
		}
		// Through the spool, a declaration travels in the rows' batch: one
		// batch to wait for (or not, with --no-wait), applied or refused
		// whole.
		together := !owned && (p.noWait || declared != nil)
		in, err := readAppend(newRowReader(r, name), k, maxRows, together)
		if err != nil {
			return err
		}
		if together {
			return a.publishAppend(ctx, st, k, declared != nil, p, in.vals)
		}
		actx, cancel := withTimeout(ctx, p.timeout) // from the first wait for the owner on
		defer cancel()
		if declared != nil {
			if _, err := b.DeclareKind(actx, *declared); err != nil {
				return err
			}
		}
		return a.applyAppend(actx, st, in.rows, p)
	})
}

// withTimeout is ctx bounded by d when d is positive, else ctx itself.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// appendKind returns the kind append checks the rows against. A
// declaration from --schema is returned once it is found to reconcile with
// the catalog's (as kind apply checks it; a detached process cannot read
// the catalog, and the owner checks it when it is declared). Without one
// the kind is read from the catalog, which a detached process cannot do:
// that error says how to append anyway.
func appendKind(ctx context.Context, st *recordresults.Store, name string, declared *recordstore.Kind) (*recordstore.Kind, error) {
	b := st.Backend()
	if declared != nil {
		if err := precheckKinds(ctx, b, []recordstore.Kind{*declared}, st.Role() != owner.RoleDetached); err != nil {
			return nil, err
		}
		return declared, nil
	}
	k, err := b.Kind(ctx, name)
	if errors.Is(err, owner.ErrCatalogVersion) {
		return nil, fmt.Errorf("kind %s cannot be read from the catalog; pass --schema FILE declaring it: %w", name, err)
	}
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// appendInput is append's input once read and checked: the rows as
// decoded (to append them), or normalized for the kind (to publish them).
type appendInput struct {
	rows []recordstore.Row
	vals []recordstore.Values
}

// readAppend reads every row of in and checks it against k (at most
// maxRows when it is not zero), keeping them normalized when publish is
// set.
func readAppend(in *rowReader, k *recordstore.Kind, maxRows int64, publish bool) (appendInput, error) {
	var out appendInput
	keep := func(row recordstore.Row, v recordstore.Values) {
		if publish {
			out.vals = append(out.vals, v)
		} else {
			out.rows = append(out.rows, row)
		}
	}
	err := readRows(in, k, maxRows, keep)
	return out, err
}

// applyAppend appends rows (directly, or through the spool waiting for the
// owner's result until ctx, bounded by --timeout, ends) and prints the
// window with this process's role.
func (a *app) applyAppend(ctx context.Context, st *recordresults.Store, rows []recordstore.Row, p appendArgs) error {
	role := roleOwner
	if st.Role() != owner.RoleOwner {
		role = roleSpooled
	}
	res, err := st.Backend().Append(ctx, p.stream, p.kind, rows)
	if err != nil {
		return err
	}
	return a.printOne(appended{AppendResult: res, Role: role})
}

// publishAppend checks that the stream can take rows of kind and publishes
// vals (normalized for kind, in its column order) as one append batch, led
// by a declaration of kind when declare is set (--schema), so that the
// owner declares it as kind apply would, or refuses both. With --no-wait it
// prints the batch's id at once; otherwise it waits for the owner's
// outcome (bounded by --timeout: then the error is pending, naming the
// batch) and prints the append's window. A detached process cannot read
// the stream to check it: the owner does, when it applies the batch. On
// an error before the publish, nothing was published.
func (a *app) publishAppend(ctx context.Context, st *recordresults.Store, kind *recordstore.Kind, declare bool, p appendArgs, vals []recordstore.Values) error {
	if st.Role() != owner.RoleDetached {
		if err := checkAppendable(ctx, st.Backend(), p.stream, kind.Name); err != nil {
			return err
		}
	}
	var entries []recordstore.BatchEntry
	if declare {
		entries = append(entries, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: kind.Name})
	}
	entries = append(entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: p.stream, Kind: kind.Name, Rows: vals})
	id, err := st.Publish(ctx, recordstore.Batch{Schemas: []recordstore.Kind{*kind}, Entries: entries})
	if err != nil {
		return err
	}
	if p.noWait {
		return a.printOne(recordresults.PendingBatch{Batch: id, Pending: true})
	}
	actx, cancel := withTimeout(ctx, p.timeout)
	defer cancel()
	res, err := st.Await(actx, id)
	if err != nil {
		return err
	}
	what := "append to " + p.stream
	if err := res.Err(); err != nil { // the batch's, or its first refused entry's (the declaration's names its kind)
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(res.Entries) != len(entries) {
		return fmt.Errorf("%s: batch %s has %d entry results, want %d", what, id, len(res.Entries), len(entries))
	}
	last := res.Entries[len(res.Entries)-1]
	if last.Append == nil {
		return fmt.Errorf("%s: the owner's result has no append window", what)
	}
	return a.printOne(appended{AppendResult: *last.Append, Role: roleSpooled})
}

// checkAppendable refuses, as the owner would, an append to a live stream
// of another kind (schema_conflict) or to a sealed one (sealed). A stream
// that does not exist is created by the append.
func checkAppendable(ctx context.Context, b recordstore.Backend, stream, kind string) error {
	m, err := b.Meta(ctx, stream)
	switch {
	case errors.Is(err, recordstore.ErrNotFound):
		return nil
	case err != nil:
		return err
	case m.Kind != kind:
		return fmt.Errorf("append to %s: %w: stream %s has kind %s, not %s", stream, recordstore.ErrSchemaConflict, stream, m.Kind, kind)
	case m.Sealed:
		return fmt.Errorf("append to %s: %w: stream %s is sealed", stream, recordstore.ErrSealed, stream)
	}
	return nil
}

// bulkAppended is the output of append --batch-rows: the window of every
// batch together, and how many batches there were.
type bulkAppended struct {
	appended
	Batches int `json:"batches"`
}

// bulkAppend streams the rows of in through the store's bulk Writer in
// batches of at most p.batchRows rows, checking each row as it is read,
// and prints the batches' windows together. On error, the batches
// delivered before it stay applied; the error says how many rows they
// held. actx bounds every wait for the owner (--timeout).
func (a *app) bulkAppend(actx context.Context, st *recordresults.Store, p appendArgs, k *recordstore.Kind, in *rowReader) error {
	w := st.NewWriter(spool.WriterOptions{MaxRows: p.batchRows})
	// The rows go to the Writer in chunks (one Append each, never split)
	// that fill a batch exactly, so that each batch holds p.batchRows
	// rows of the input, the last one fewer (or fewer when 64 MiB
	// comes first).
	chunkRows := int(min(p.batchRows, 1024))
	var chunk []recordstore.Row
	var inBatch int64 // rows of the current batch read so far
	keyIdx := k.KeyIndexes()
	seen := map[string]int{} // the current batch's keys and their lines: a repeated key is refused
	flushChunk := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := w.Append(actx, p.stream, k, chunk)
		chunk = chunk[:0]
		return err
	}
	// stopped ends at a batch that could not be delivered (err): the
	// batches before it stay applied, or wait in the spool when the wait
	// for the owner ran out, which the error then says instead.
	stopped := func(err error) error {
		results, ferr := w.Flush(actx)
		switch {
		case ferr == nil:
		case errors.Is(ferr, owner.ErrPending) && actx.Err() != nil && errors.Is(err, actx.Err()):
			err = ferr
		case err == nil || ferr.Error() != err.Error():
			err = errors.Join(err, ferr)
		}
		return bulkStopped(err, results, w)
	}
	// badRow stops at a row that does not fit: the rows before it are
	// applied, and the error says how many.
	badRow := func(err error) error {
		return stopped(errors.Join(err, flushChunk()))
	}
	for {
		row, line, err := in.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return badRow(err)
		}
		if inBatch == p.batchRows { // this row starts the next batch
			if err := flushChunk(); err != nil {
				return stopped(err)
			}
			inBatch = 0
			clear(seen)
		}
		vals, err := spool.Normalize(k, row)
		if err != nil {
			return badRow(fmt.Errorf("%s line %d: %w", in.name, line, err))
		}
		if len(keyIdx) > 0 {
			key := keyOf(vals, keyIdx)
			if first, dup := seen[key]; dup {
				return badRow(recordstore.Invalidf("%s lines %d and %d: kind %s: the same key %s in one batch", in.name, first, line, k.Name, key))
			}
			seen[key] = line
		}
		if len(chunk) == chunkRows {
			if err := flushChunk(); err != nil {
				return stopped(err)
			}
		}
		chunk = append(chunk, row)
		inBatch++
	}
	if err := flushChunk(); err != nil {
		return stopped(err)
	}
	results, err := w.Close(actx)
	if err != nil {
		return bulkStopped(err, results, w)
	}
	out := bulkAppended{appended: appended{AppendResult: sumAppends(results), Role: roleOwner}, Batches: len(results)}
	out.Stream, out.Kind = p.stream, k.Name
	if st.Role() != owner.RoleOwner {
		out.Role = roleSpooled
	}
	return a.printOne(out)
}

// sumAppends is the appends of results together: the first From, the last
// To, the counts summed.
func sumAppends(results []recordstore.BatchResult) recordstore.AppendResult {
	var out recordstore.AppendResult
	for _, r := range results {
		for _, e := range r.Entries {
			if e.Append == nil {
				continue
			}
			if out.From == 0 {
				out.From = e.Append.From
			}
			out.To = e.Append.To
			out.Appended += e.Append.Appended
			out.Skipped += e.Append.Skipped
			out.Replaced += e.Append.Replaced
		}
	}
	return out
}

// appliedBefore adds to err how many input rows and batches results
// applied: what stays of a bulk append that failed. A row is appended or
// skipped; a replacing row is appended (Replaced counts it again).
func appliedBefore(err error, results []recordstore.BatchResult) error {
	sum := sumAppends(results)
	return fmt.Errorf("%w (applied: %d rows in %s)", err, sum.Appended+sum.Skipped, plural(len(results), "batch", "batches"))
}

// bulkStopped is err of a bulk append that stopped, with what its Writer
// had applied by then (results, the last Flush's, or else the outcomes
// it kept) and, when the owner's answer was not awaited to the end, what
// still waits in the spool: those rows are durable and will be applied,
// so the input resumes after them.
func bulkStopped(err error, results []recordstore.BatchResult, w *recordresults.Writer) error {
	if results == nil {
		results = w.Kept()
	}
	err = appliedBefore(err, results)
	if batches, rows := w.Unanswered(); batches > 0 {
		err = fmt.Errorf("%w (spooled, not applied yet: %d rows in %s)", err, rows, plural(batches, "batch", "batches"))
	}
	return err
}

// plural is n with one or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
