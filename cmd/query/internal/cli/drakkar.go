// query drakkar: the files of a Drakkar worker — recording events into a
// worker's flight recorder, listing the shared history folders and
// printing a sealed file's meta object.

package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/spf13/cobra"
)

func (a *app) drakkarCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drakkar",
		Short: "Record into a Drakkar worker's flight recorder and inspect the shared history",
		Args:  cobra.NoArgs,
		RunE:  needSubcommand,
	}
	cmd.AddCommand(append([]*cobra.Command{a.drakkarRecordCmd(), a.drakkarLsCmd(), a.drakkarMetaCmd(),
		a.drakkarArchiveCmd(), a.drakkarMergeCmd(), a.drakkarWorkerCmd(), a.drakkarStatusCmd()}, a.drakkarCacheCmds()...)...)
	hideStoreFlags(cmd)
	return cmd
}

// storeFlags are the root's flags about the records store, which no
// drakkar subcommand reads.
var storeFlags = []string{"store", "read-only"}

// hideStoreFlags leaves the store flags out of the help of cmd and its
// subcommands (they are still accepted, and ignored).
func hideStoreFlags(cmd *cobra.Command) {
	def := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		for _, name := range storeFlags {
			if f := c.Root().PersistentFlags().Lookup(name); f != nil {
				f.Hidden = true
			}
		}
		def(c, args)
	})
}

// recordArgs are the flags of drakkar record.
type recordArgs struct {
	storage, shared, name, cluster string
	set                            []string
	drain, timeout                 time.Duration
}

// recorded is the output of drakkar record.
type recorded struct {
	recorder.Written
	Worker string `json:"worker"`
	// File is the live file the events went to when this process owned
	// the worker's recorder (it is sealed and moved on exit), else "";
	// an absolute path.
	File string `json:"file"`
	// Sealed is where that file went: its absolute path in the history
	// folder, or "" when it stayed in storage.dir (no time left, or a
	// failed move).
	Sealed string `json:"sealed,omitempty"`
}

func (a *app) drakkarRecordCmd() *cobra.Command {
	var p recordArgs
	cmd := &cobra.Command{
		Use:   "record --storage DIR [--shared DIR] --name W [--cluster C] [--set key=value]... [FILE|-]",
		Short: "Append NDJSON events to worker W's flight recorder",
		Long: `Append events to the flight recorder of worker W: one JSON object per
line (blank lines skipped), keys = the columns of the events table (all but
id); args, metadata and labels are given as JSON values and stored as
canonical JSON text; ts is REAL Unix seconds (now when absent) and dt is
always derived from it. Every line is checked before anything is written:
a bad line fails the command (code invalid, naming the line) and nothing
is recorded: text that is not UTF-8, a lone surrogate escape (\ud800) and
an escaped NUL (\u0000) are refused as well. Input with no event (empty,
or blank lines only) writes nothing at all and prints an empty window. The events go in as one append, after the recording-side
filters of the configuration (--set ui.recorder.event_min_duration_ms=...).

When no process runs worker W's recorder, this command owns it for its
length: it opens a new live file <W>-<timestamp>.db in --storage (the next
free second when a file of this second exists), writes worker_config and
the events, and on exit seals the file and moves it into the history
folder of the cluster (<shared>/history/<cluster>/), as a stopping worker
does; --drain bounds the move (what does not fit stays in --storage, and
the next start of W moves it as a leftover). When a worker W runs, the
events go through its spool into its live file and its exact result comes
back.

--set takes the configuration keys of docs/drakkar.md (storage.dir,
shared.dir, ui.recorder.*), e.g. --set ui.recorder.store_config=false.

Prints {"worker","file","sealed","stream","kind","from","to","appended",
"skipped","replaced","filtered","spooled"}: from..to is the window of
event ids the events took.`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			src := "-"
			if len(args) == 1 {
				src = args[0]
			}
			return a.drakkarRecord(cmd.Context(), p, src)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&p.storage, "storage", "", "the worker's storage.dir (required)")
	f.StringVar(&p.shared, "shared", "", "the fleet's shared.dir; default: --storage")
	f.StringVar(&p.name, "name", "", "the worker name (required)")
	f.StringVar(&p.cluster, "cluster", "", "the cluster name (\"\" is the cluster default)")
	f.StringArrayVar(&p.set, "set", nil, "a configuration key=value (repeatable)")
	f.DurationVar(&p.drain, "drain", 30*time.Second, "how long the exit may take to move the sealed file into the history folder")
	f.DurationVar(&p.timeout, "timeout", 0, "how long to wait for another process's outcome of the events (0: no limit)")
	_ = cmd.MarkFlagRequired("storage")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// recordConfig builds the recorder configuration of drakkar record's flags.
func recordConfig(p recordArgs) (recorder.Config, error) {
	cfg := recorder.DefaultConfig()
	cfg.StorageDir, cfg.SharedDir, cfg.WorkerName, cfg.ClusterName = p.storage, p.shared, p.name, p.cluster
	for _, kv := range p.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return cfg, usagef("--set %q: want key=value", kv)
		}
		if err := cfg.Set(k, v); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

func (a *app) drakkarRecord(ctx context.Context, p recordArgs, src string) error {
	cfg, err := recordConfig(p)
	if err != nil {
		return err
	}
	if !cfg.WritesFiles() {
		return recordstore.Invalidf("drakkar record needs a storage.dir and the UI on: memory-only mode records nothing")
	}
	events, err := a.readEvents(src)
	if err != nil {
		return err
	}
	if p.timeout < 0 {
		return usagef("--timeout must not be negative, got %s", p.timeout)
	}
	if len(events) == 0 {
		// Nothing to record: no live file is made, sealed or published.
		return a.printOne(recorded{Worker: cfg.WorkerName})
	}
	var said bool
	waiting := func(st owner.State) {
		if !said {
			said = true
			fmt.Fprintf(a.env.Stderr, "query: waiting for pid %d on %s (instance %s), the owner of worker %s's recorder\n",
				st.PID, st.Host, st.Instance, cfg.WorkerName)
		}
	}
	rep, err := a.workerReplica(cfg.WorkerName)
	if err != nil {
		return err
	}
	ropts := recorder.Options{Logger: a.logger(slog.LevelWarn), Waiting: waiting}
	if rep != nil {
		ropts.Replica = func() (owner.Replicator, owner.Fence, error) { return rep(worker.StoreRecorder) }
	}
	rec, err := recorder.Open(ctx, cfg, ropts)
	if err != nil {
		return err
	}
	out := recorded{Worker: cfg.WorkerName}
	wctx, wcancel := ctx, context.CancelFunc(func() {})
	if p.timeout > 0 {
		wctx, wcancel = context.WithTimeout(ctx, p.timeout)
	}
	w, werr := rec.Write(wctx, events)
	wcancel()
	// This process may have taken the recorder over while it waited.
	out.File = absPath(rec.LiveFile())
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.drain)
	defer cancel()
	cerr := rec.Close(cctx)
	if werr != nil {
		return werr
	}
	out.Written = w
	if out.File != "" {
		dest := filepath.Join(cfg.HistoryDir(), filepath.Base(out.File))
		if _, err := os.Stat(dest); err == nil {
			out.Sealed = absPath(dest)
		}
	}
	if cerr != nil {
		// The events are in; say so, and fail on what the exit did not do.
		_ = a.printOne(out)
		return fmt.Errorf("close the recorder: %w", cerr)
	}
	return a.printOne(out)
}

// absPath is p made absolute ("" stays ""; p as given when the working
// folder cannot be read).
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// readEvents reads and checks every NDJSON event of src before anything is
// written.
func (a *app) readEvents(src string) ([]recorder.Event, error) {
	r, name, done, err := a.openInput(src)
	if err != nil {
		return nil, err
	}
	defer done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []recorder.Event
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev, err := recorder.ParseEventJSON(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, recordstore.Invalidf("%s: a line is longer than 64 MiB", name)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

func (a *app) drakkarLsCmd() *cobra.Command {
	var shared string
	cmd := &cobra.Command{
		Use:   "ls --shared DIR",
		Short: "List the history folders and merge results of a shared folder, from meta files only",
		Long: `List the shared folder's history/<cluster> folders (sorted by name),
then merged/: each file with its path (relative to DIR), name, kind
(sealed, archive or merged), size_bytes, modified_at and meta — the meta
object of a sealed file (null when its meta file is missing), null for the
other kinds. No sealed file is opened. Prints {"folders":[...]}. A shared
folder that does not exist fails with code not_found.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(shared); errors.Is(err, os.ErrNotExist) {
				return recordstore.Errorf(recordstore.ErrNotFound, "shared folder %s does not exist", shared)
			}
			h, err := recorder.ListHistory(shared)
			if err != nil {
				return err
			}
			return a.printOne(h)
		}),
	}
	cmd.Flags().StringVar(&shared, "shared", "", "the fleet's shared.dir (required)")
	_ = cmd.MarkFlagRequired("shared")
	return cmd
}

func (a *app) drakkarMetaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "meta FILE",
		Short: "Print the meta object of a sealed recorder file",
		Long: `Print the meta object of a sealed recorder file: FILE is the meta file
(<name>.db.meta.json) or the sealed file beside it. The object is checked
(schema 1, every key of its type) and printed in its canonical bytes. A
meta file that does not exist fails with code not_found.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			path := args[0]
			if strings.HasSuffix(path, ".db") {
				path = filepath.Join(filepath.Dir(path), dbfiles.MetaFileName(filepath.Base(path)))
			}
			m, err := dbfiles.ReadMeta(path)
			if errors.Is(err, fs.ErrNotExist) {
				return recordstore.Errorf(recordstore.ErrNotFound, "no meta file %s", path)
			}
			if err != nil {
				return err
			}
			b, err := dbfiles.EncodeMeta(m)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.env.Stdout, "%s\n", b)
			return err
		}),
	}
}
