// query drakkar archive and merge: one archive pass over a cluster's
// history folder, and the merge engine on files given by path.

package cli

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/merge"
	"github.com/fb46ecde/records/recordstore"
	"github.com/spf13/cobra"
)

func (a *app) drakkarArchiveCmd() *cobra.Command {
	var shared, cluster, name string
	var set []string
	cmd := &cobra.Command{
		Use:   "archive --shared DIR --cluster C [--name W] [--set key=value]...",
		Short: "Run one archive pass over a cluster's history folder and print what it did",
		Long: `Run one archive pass over <DIR>/history/<C> as a worker's recorder does
after a rotation tick: take the folder's .archive.lock (or skip when another
pass holds a fresh one), sweep leftovers, merge each due window's sealed
files into <C>-<from>__<to>.db.gz, delete the sources it covers, expire old
archives and merge results. --name W is the worker named in the lock.
--set takes history.archive.* (enabled, window_hours, due_after_hours,
retention_days, lock_stale_seconds), history.merged_retention_days and
ui.recorder.rotation_interval_hours, fractions allowed. Prints the report
as one JSON object: locked, fenced, published, deleted, set_aside, swept,
expired, pruned, failed, archive_files and archive_bytes (the archives in
the folder after the pass), holder (the worker, instance, token and
acquired_at of the pass whose fresh lock made this one skip) and next_due
(when the next window becomes due). When nothing was published, one line
on stderr says why: who holds the lock, or when the next window is due. SIGINT/SIGTERM end the pass after the window in
progress. A bad key or value, or a cluster name whose archive names
would not fit in 255 bytes, fails with code invalid and touches nothing.
When a due window could not be published the report is printed and the
command exits 1, naming the first such window and why.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			cfg := archive.DefaultConfig()
			for _, kv := range set {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usagef("--set %q: want key=value", kv)
				}
				if err := cfg.Set(k, v); err != nil {
					return err
				}
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			log := a.logger(slog.LevelWarn)
			archive.LogStart(log, cfg, archive.HistoryDir(shared, cluster))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := archive.Pass(ctx, cfg, archive.Options{Shared: shared, Cluster: cluster, Worker: name, Logger: log})
			if err != nil {
				return err
			}
			if err := a.printOne(rep); err != nil {
				return err
			}
			a.archiveHint(rep)
			return rep.Err()
		}),
	}
	f := cmd.Flags()
	f.StringVar(&shared, "shared", "", "the fleet's shared.dir (required)")
	f.StringVar(&cluster, "cluster", "", "cluster.name: the history folder is <shared>/history/<sanitized cluster> (required)")
	f.StringVar(&name, "name", "query", "worker.name written into the lock")
	f.StringArrayVar(&set, "set", nil, "a configuration key=value (repeatable)")
	_ = cmd.MarkFlagRequired("shared")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// archiveHint says on stderr why a pass published nothing: who holds the
// lock, or when the next window is due.
func (a *app) archiveHint(rep archive.Report) {
	switch {
	case rep.Holder != nil:
		h := rep.Holder
		fmt.Fprintf(a.env.Stderr, "query: skipped: worker %s (instance %s, token %s) holds %s since %s\n",
			h.Worker, h.Instance, h.Token, filepath.Join(rep.Folder, dbfiles.ArchiveLockName), h.AcquiredAt.Format(time.RFC3339))
	case len(rep.Published) == 0 && len(rep.Failed) == 0 && rep.NextDue != nil:
		fmt.Fprintf(a.env.Stderr, "query: nothing due; the next window is due at %s\n", rep.NextDue.Format(time.RFC3339))
	}
}

// mergeSource is one source of a merge result, as JSON.
type mergeSource struct {
	Path    string `json:"path"`
	Status  string `json:"status"`
	Kind    string `json:"kind"`
	Error   string `json:"error,omitempty"`
	Workers int64  `json:"workers"`
	Events  int64  `json:"events"`
	States  int64  `json:"states"`
}

// mergeOutput is the output of drakkar merge.
type mergeOutput struct {
	Out     string        `json:"out"`
	Cluster string        `json:"cluster"`
	Workers int64         `json:"workers"`
	Events  int64         `json:"events"`
	States  int64         `json:"states"`
	Sources []mergeSource `json:"sources"`
}

func (a *app) drakkarMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out FILE SRC...",
		Short: "Merge sealed recorder files and merge results into one merged file",
		Long: `Merge SRC... (sealed recorder files, merge results, gunzipped archives)
into a new file FILE in the merged format (workers, events, worker_states),
0600, rollback journal, written under a temp name and renamed into place.
Sources are only read (immutable=1). A source that cannot be read is
skipped and reported; the command fails (and writes nothing) only when no
source could be read or FILE exists. Prints the result as one JSON object
with each source's status (merged, partial, skipped) and counts.`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			res, err := merge.Merge(cmd.Context(), out, args, merge.Options{Logger: a.logger(slog.LevelWarn)})
			if err != nil {
				return err
			}
			return a.printOne(mergeJSON(res))
		}),
	}
	cmd.Flags().StringVar(&out, "out", "", "the merged file to write; must not exist (required)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// mergeJSON turns a merge result into its JSON form.
func mergeJSON(res merge.Result) mergeOutput {
	o := mergeOutput{Out: res.Out, Cluster: res.Cluster, Workers: res.Workers, Events: res.Events, States: res.States,
		Sources: []mergeSource{}}
	for _, s := range res.Sources {
		ms := mergeSource{Path: s.Path, Status: s.Status, Kind: s.Kind, Workers: s.Workers, Events: s.Events, States: s.States}
		if s.Err != nil {
			ms.Error = recordstore.Message(s.Err) // without the code words: "merge: source unreadable: <path>: <cause>"
		}
		o.Sources = append(o.Sources, ms)
	}
	return o
}
