// Merge: the entry point, its options and its result.

package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/fb46ecde/records/recordstore"
)

// Status of one source in a Result.
const (
	// StatusMerged: every row of the source is in the output. Only such a
	// source may be deleted by the caller.
	StatusMerged = "merged"
	// StatusSkipped: the source could not be opened or read; none of its
	// rows is in the output. SourceResult.Err says why.
	StatusSkipped = "skipped"
	// StatusPartial: the source failed part-way (a corrupt page, a row
	// breaking a constraint) and the rows read before the failure, in
	// order, are in the output; SourceResult.Err says where the copy
	// stopped. A caller must not delete it, and must not merge it again
	// into a file holding this output's rows (they would be there twice).
	StatusPartial = "partial"
)

// Kind of a source, as found in its tables.
const (
	// KindRecorder is a sealed recorder file: events, worker_config,
	// worker_state.
	KindRecorder = "recorder"
	// KindMerged is a merge result or a gunzipped archive: workers,
	// events, worker_states.
	KindMerged = "merged"
)

// Options tune a merge. The zero value is ready to use.
type Options struct {
	// Logger receives one record per source and one per merge; nil
	// discards them.
	Logger *slog.Logger
	// TempDir holds the private copies of WAL-header sources; "" means the
	// output's folder. The copies are removed before Merge returns.
	TempDir string
	// CacheKiB is the output connection's page cache in KiB (the memory a
	// merge uses beyond a page of each table); 0 means 32768 (32 MiB).
	CacheKiB int
	// AllOrNothing skips a source that fails part-way instead of
	// salvaging the rows read before the failure: no source is then
	// partial. The archive pass may want it; a debug merge wants the rows.
	AllOrNothing bool
	// OnSource, when not nil, is called after each source on Merge's
	// goroutine, with that source's result.
	OnSource func(SourceResult)
}

// SourceResult is the outcome of one source.
type SourceResult struct {
	// Path is the source as given to Merge.
	Path string
	// Status is StatusMerged, StatusPartial or StatusSkipped.
	Status string
	// Err is nil for a merged source; for a partial or skipped one it
	// matches
	// ErrUnreadable and wraps the cause (ErrNotSQLite, ErrUnknownFormat,
	// ErrDuplicateSource, fs.ErrNotExist, a SQLite error).
	Err error
	// Kind is KindRecorder or KindMerged; "" when the source was skipped
	// before its tables were read.
	Kind string
	// Workers, Events and States count the rows this source added to the
	// output's three tables (0 for a skipped source).
	Workers, Events, States int64
}

// Result is the outcome of a merge.
type Result struct {
	// Out is the output's path; the file exists only when Merge returned
	// nil.
	Out string
	// Sources has one entry per source, in the order given.
	Sources []SourceResult
	// Workers, Events and States count the output's rows.
	Workers, Events, States int64
	// Cluster is the cluster the output inherits: the cluster_name that
	// every row of its workers table names, when they all name the same
	// non-empty one; "" otherwise. The merged file carries it in those
	// workers.cluster_name values and nowhere else.
	Cluster string
}

// Merged returns the paths of the sources reported merged, in order: the
// only sources a caller may delete.
func (r Result) Merged() []string {
	var out []string
	for _, s := range r.Sources {
		if s.Status == StatusMerged {
			out = append(out, s.Path)
		}
	}
	return out
}

// Merge merges sources into a new file at out, in the merged format.
//
// out must not exist (ErrOutputExists) and its folder must. Sources are
// sealed recorder files, merge results or gunzipped archives, in any mix;
// each one's outcome is in Result.Sources (merged, partial or skipped),
// and a source that cannot be read does not fail the merge. To fold an
// existing archive into a new one, pass the gunzipped archive as one more
// source: the worker rows it holds are kept, and their source_file values
// say which sealed files it already covers.
//
// On success the output is complete, 0600, with a rollback journal, and
// durable (file and folder fsynced). On error nothing is at out and no
// temp file is left (after a failed folder fsync, the file already
// renamed to out is removed again, as far as the file system lets it):
// the Result still tells what was learned of each source so far. Errors:
// the argument errors of errors.go, ErrNothingMerged (every source
// skipped), the context's error, or a failure to write the output
// (fsutil.ErrSync for an fsync).
func Merge(ctx context.Context, out string, sources []string, opts Options) (Result, error) {
	res := Result{Out: out}
	if err := checkArgs(out, sources); err != nil {
		return res, err
	}
	opts = opts.withDefaults(out)
	w, err := createOutput(ctx, out, opts)
	if err != nil {
		return res, err
	}
	if err := mergeAll(ctx, w, sources, opts, &res); err != nil {
		w.abort()
		return res, err
	}
	if err := w.finish(ctx, &res); err != nil {
		w.abort()
		return res, err
	}
	opts.Logger.Info("merge_done", "out", out, "sources", len(sources), "merged", len(res.Merged()),
		"workers", res.Workers, "events", res.Events, "states", res.States, "cluster", res.Cluster)
	return res, nil
}

// mergeAll copies each source in turn into w, recording each outcome in
// res. It fails only for an error of the merge itself.
func mergeAll(ctx context.Context, w *output, sources []string, opts Options, res *Result) error {
	seen := make(map[string]bool, len(sources))
	for _, path := range sources {
		if err := ctx.Err(); err != nil {
			return err
		}
		sr, err := w.mergeOne(ctx, path, seen)
		if err != nil {
			return err
		}
		res.Sources = append(res.Sources, sr)
		logSource(opts.Logger, sr)
		if opts.OnSource != nil {
			opts.OnSource(sr)
		}
	}
	if !slices.ContainsFunc(res.Sources, func(s SourceResult) bool { return s.Status != StatusSkipped }) {
		return ErrNothingMerged
	}
	return ctx.Err()
}

// logSource logs one source's outcome.
func logSource(log *slog.Logger, sr SourceResult) {
	if sr.Err != nil {
		log.Warn("merge_source_"+sr.Status, "source", sr.Path, "kind", sr.Kind,
			"events", sr.Events, "states", sr.States, "error", sr.Err)
		return
	}
	log.Info("merge_source_merged", "source", sr.Path, "kind", sr.Kind,
		"workers", sr.Workers, "events", sr.Events, "states", sr.States)
}

// checkArgs refuses an unusable output path or an empty source list.
func checkArgs(out string, sources []string) error {
	if out == "" || filepath.Base(out) == "." || filepath.Base(out) == string(filepath.Separator) {
		return recordstore.Errorf(ErrBadPath, "%q", out)
	}
	if len(sources) == 0 {
		return ErrNoSources
	}
	if _, err := os.Lstat(out); err == nil {
		return recordstore.Errorf(ErrOutputExists, "%s", out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stat merge output: %w", err)
	}
	return nil
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults(out string) Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.TempDir == "" {
		o.TempDir = filepath.Dir(out)
	}
	if o.CacheKiB <= 0 {
		o.CacheKiB = 32768
	}
	return o
}
