// query spool: the store's spool folder seen from the command line —
// listing, garbage-collecting and retrying batches. Publishing and
// inspecting have files of their own.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	// The parquet codec, so that batches in that format can be published
	// and inspected.
	_ "github.com/fb46ecde/records/recordstore/spool/parquet"
	"github.com/spf13/cobra"
)

func (a *app) spoolCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spool",
		Short: "Publish, list, inspect, retry and garbage-collect spool batches",
		Long: `Work on the store's spool folder (<store>.spool): publish a batch of rows
for the store's owner to ingest, list and inspect the batches waiting or
refused, move a refused batch back, and remove what is old.

None of these commands opens the store for writing or takes its lock.`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(a.spoolPublishCmd(), a.spoolLsCmd(), a.spoolInspectCmd(), a.spoolGCCmd(), a.spoolRetryCmd())
	return cmd
}

// openSpool opens the spool folder of --store, creating it if needed.
func (a *app) openSpool(ctx context.Context) (*spool.Dir, error) {
	if a.storePath == "" {
		return nil, usagef("--store must not be empty")
	}
	return spool.Open(ctx, a.storePath, spool.Options{Logger: a.logger(slog.LevelWarn)})
}

// batchLine is one line of spool ls.
type batchLine struct {
	Batch    string `json:"batch"`
	Producer string `json:"producer"`
	Seq      int64  `json:"seq"`
	Created  string `json:"created"`
	// Entries, Rows and Bytes come from the manifest; null when it cannot
	// be read (spool inspect says why).
	Entries *int   `json:"entries"`
	Rows    *int64 `json:"rows"`
	Bytes   *int64 `json:"bytes"`
	// Applied (incoming/ only) is what the owner says: true when it has
	// committed the batch and the folder waits for its next WAL sync to
	// leave, false when the batch waits to be applied; null when no owner
	// answered (the JSON literal; absent for failed/).
	Applied json.RawMessage `json:"applied,omitempty"`
}

func (a *app) spoolLsCmd() *cobra.Command {
	var failed, refused bool
	cmd := &cobra.Command{
		Use:   "ls [--failed | --refused]",
		Short: "List the batches waiting in incoming/ (or failed, or their refused entries), oldest first",
		Long: `List the batches waiting in incoming/ — or, with --failed, those the owner
failed (in failed/) — oldest first, one JSON object per line:

  {"batch","producer","seq","created","entries","rows","bytes","applied"}

entries, rows and bytes (of the data files) come from the batch's manifest
and are null when it cannot be read; spool inspect says why. applied
(incoming/ only) is the owner's word, asked over its socket: true for a
batch it has committed whose folder leaves at its next WAL sync (within a
quarter of a second while it is busy), false for one still to be applied,
null when no owner answered.

With --refused it lists, from the store's ledger, the entries the owner
refused in batches it committed (rows into a sealed stream, a schema that
conflicts with the catalog: the batch's other entries were applied and
its folder went to trash/), oldest batch first, one JSON object per line:

  {"batch","producer","seq","entry","op","stream","code","message","ingestedAt"}

batch is the batch id, entry the entry's index in the batch (from 0). The
ledger keeps a batch for the owner's ledger retention (7 days by default).
It reads the live file read-only, without a lock.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if failed && refused {
				return usagef("--failed and --refused cannot be used together")
			}
			if refused {
				return a.spoolLsRefused(cmd.Context())
			}
			state := spool.StateIncoming
			if failed {
				state = spool.StateFailed
			}
			return a.spoolLs(cmd.Context(), state)
		}),
	}
	cmd.Flags().BoolVar(&failed, "failed", false, "list failed/ instead of incoming/")
	cmd.Flags().BoolVar(&refused, "refused", false, "list the entries refused in committed batches, from the ledger")
	return cmd
}

// refusedLine is one line of spool ls --refused.
type refusedLine struct {
	Batch      string `json:"batch"`
	Producer   string `json:"producer"`
	Seq        int64  `json:"seq"`
	Entry      int    `json:"entry"`
	Op         string `json:"op"`
	Stream     string `json:"stream"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	IngestedAt string `json:"ingestedAt"`
}

// spoolLsRefused prints the ledger's refused entries.
func (a *app) spoolLsRefused(ctx context.Context) error {
	return a.readCatalog(ctx, func(b recordstore.Backend) error {
		sb, ok := b.(*sqlite.Backend)
		if !ok {
			return fmt.Errorf("spool ls --refused: the store's backend keeps no ledger")
		}
		refused, err := sb.RefusedEntries(ctx)
		if err != nil {
			return err
		}
		p := newPrinter(a.env.Stdout)
		for _, r := range refused {
			line := refusedLine{Batch: r.Batch, Producer: r.Producer, Seq: r.Seq, Entry: r.Entry,
				Op: string(r.Op), Stream: r.Stream, Code: r.Error.Code, Message: r.Error.Message,
				IngestedAt: r.IngestedAt.UTC().Format(recordstore.DatetimeLayout)}
			if err := p.line(line); err != nil {
				return err
			}
		}
		return p.flush()
	})
}

func (a *app) spoolLs(ctx context.Context, state spool.State) error {
	dir, err := a.openSpool(ctx)
	if err != nil {
		return err
	}
	names, err := dir.List(ctx, state)
	if err != nil {
		return err
	}
	var applied map[string]bool // nil: no owner answered
	if state == spool.StateIncoming && len(names) > 0 {
		if l, ok, err := owner.ReadSpool(ctx, a.storePath); err == nil && ok {
			applied = make(map[string]bool, len(l.Incoming))
			for _, b := range l.Incoming {
				applied[b.Batch] = b.Applied
			}
		}
	}
	p := newPrinter(a.env.Stdout)
	for _, n := range names {
		line := batchLine{Batch: n.String(), Producer: n.Instance, Seq: n.Seq,
			Created: n.Created.UTC().Format(recordstore.DatetimeLayout)}
		if m, err := readManifest(dir.Path(state, n.String())); err == nil {
			entries, rows, bytes := len(m.Entries), int64(0), int64(0)
			for _, e := range m.Entries {
				rows += e.Rows
				bytes += e.Bytes
			}
			line.Entries, line.Rows, line.Bytes = &entries, &rows, &bytes
		}
		if state == spool.StateIncoming {
			line.Applied = json.RawMessage("null")
			if applied != nil {
				line.Applied = json.RawMessage(strconv.FormatBool(applied[n.String()]))
			}
		}
		if err := p.line(line); err != nil {
			return err
		}
	}
	return p.flush()
}

// readManifest reads and checks the manifest of the batch folder at path,
// without looking at its data files.
func readManifest(path string) (*spool.Manifest, error) {
	f, err := os.Open(filepath.Join(path, spool.ManifestFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, spool.MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > spool.MaxManifestBytes {
		return nil, fmt.Errorf("%w: manifest larger than %d bytes", spool.ErrBadManifest, spool.MaxManifestBytes)
	}
	return spool.DecodeManifest(data)
}

// findBatch returns the folder (incoming or failed) holding batch name.
// A name that is not a batch name is ErrInvalid; a batch in neither folder
// is ErrNotFound.
func findBatch(dir *spool.Dir, name string) (spool.State, error) {
	if _, err := spool.ParseBatchName(name); err != nil {
		return "", err
	}
	for _, s := range []spool.State{spool.StateIncoming, spool.StateFailed} {
		_, err := os.Lstat(dir.Path(s, name))
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("look for spool batch %s: %w", name, err)
		}
	}
	return "", recordstore.Errorf(recordstore.ErrNotFound, "spool batch %s (neither in incoming/ nor in failed/)", name)
}

func (a *app) spoolGCCmd() *cobra.Command {
	var tmpAge, failedAge, preparedAge time.Duration
	cmd := &cobra.Command{
		Use:   "gc [--tmp-age 24h] [--failed-age 720h] [--prepared-age 10m]",
		Short: "Remove abandoned publishes, old failed batches and the trash now",
		Long: `Remove, now, what the store's owner would remove in its next GC pass:
tmp/ entries older than --tmp-age (publishes whose producer died), tmp/
folders a producer prepared for its next publish and left unused (an empty
manifest.json and first data file, nothing else) older than --prepared-age,
failed/ batches older than --failed-age, and everything in trash/ (batches
already ingested). Ages are by modification time.

A tmp/ entry younger than --tmp-age may be a publish in progress; keep the
age well above the time a publish takes.

Prints what it removed: {"tmp":[...],"failed":[...],"trash":[...]}.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if tmpAge <= 0 || failedAge <= 0 || preparedAge <= 0 {
				return recordstore.Invalidf("gc ages must be positive (got --tmp-age %v, --failed-age %v, --prepared-age %v)", tmpAge, failedAge, preparedAge)
			}
			ctx := cmd.Context()
			dir, err := a.openSpool(ctx)
			if err != nil {
				return err
			}
			res, err := dir.GC(ctx, spool.GCOptions{TmpAge: tmpAge, FailedAge: failedAge, PreparedAge: preparedAge})
			if err != nil {
				return err
			}
			return a.printOne(gcLine{Tmp: orEmpty(res.Tmp), Failed: orEmpty(res.Failed), Trash: orEmpty(res.Trash)})
		}),
	}
	f := cmd.Flags()
	f.DurationVar(&tmpAge, "tmp-age", spool.DefaultTmpAge, "remove tmp/ entries older than this")
	f.DurationVar(&failedAge, "failed-age", spool.DefaultFailedAge, "remove failed/ batches older than this")
	f.DurationVar(&preparedAge, "prepared-age", spool.DefaultPreparedAge, "remove tmp/ folders prepared and left unused older than this")
	return cmd
}

// gcLine is the output of spool gc: the names removed, per folder.
type gcLine struct {
	Tmp    []string `json:"tmp"`
	Failed []string `json:"failed"`
	Trash  []string `json:"trash"`
}

// orEmpty makes a nil list print as [] rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// retried is the output of spool retry.
type retried struct {
	Batch   string `json:"batch"`
	Retried bool   `json:"retried"`
}

func (a *app) spoolRetryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "retry BATCH",
		Short: "Move a failed batch back to incoming/ for the owner to try again",
		Long: `Move a batch from failed/ back to incoming/, removing its error.json, so
that the store's owner tries to ingest it again.

Prints {"batch":...,"retried":true}.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return a.spoolRetry(cmd.Context(), args[0])
		}),
	}
}

func (a *app) spoolRetry(ctx context.Context, name string) error {
	dir, err := a.openSpool(ctx)
	if err != nil {
		return err
	}
	if _, err := spool.ParseBatchName(name); err != nil {
		return err
	}
	err = dir.Retry(ctx, name)
	switch {
	case errors.Is(err, fs.ErrExist):
		return recordstore.Errorf(recordstore.ErrInvalid, "%w (incoming/ already holds a batch of that name)", err)
	case errors.Is(err, fs.ErrNotExist):
		if state, ferr := findBatch(dir, name); ferr == nil && state == spool.StateIncoming {
			return recordstore.Invalidf("spool batch %s is in incoming/, not in failed/", name)
		}
		return recordstore.Errorf(recordstore.ErrNotFound, "spool batch %s (not in failed/)", name)
	case err != nil:
		return err
	}
	return a.printOne(retried{Batch: name, Retried: true})
}
