// The output of a merge: a dot-prefixed temp file beside the final name,
// built on one SQLite connection with a rollback journal, then indexed,
// fsynced and renamed into place.

package merge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// mergedTables is the number of CREATE TABLE statements at the head of
// dbfiles.MergedDDL; the rest are its indexes.
const mergedTables = 3

// output is a merge result being built.
type output struct {
	out, tmp string
	tempDir  string
	// allOrNothing is Options.AllOrNothing: no salvage.
	allOrNothing bool
	db           *sql.DB
	conn         *sql.Conn // the one connection every statement runs on
	log          *slog.Logger
}

// createOutput creates the temp file (0600, exclusive), opens it with a
// rollback journal and creates the merged tables (without indexes) and the
// connection's temp table of worker ids. On error nothing is left on disk.
func createOutput(ctx context.Context, out string, opts Options) (*output, error) {
	dir := filepath.Dir(out)
	w := &output{
		out:          out,
		tmp:          filepath.Join(dir, "."+filepath.Base(out)+"."+dbfiles.NewHex16()+".tmp"),
		tempDir:      opts.TempDir,
		allOrNothing: opts.AllOrNothing,
		log:          opts.Logger,
	}
	f, err := os.OpenFile(w.tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fsutil.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create merge temp file: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(w.tmp)
		return nil, fmt.Errorf("create merge temp file: %w", err)
	}
	if err := w.open(ctx, opts.CacheKiB); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

// open opens the temp file's connection and creates the tables.
func (w *output) open(ctx context.Context, cacheKiB int) error {
	db, err := sql.Open("sqlite", outputDSN(w.tmp, cacheKiB))
	if err != nil {
		return fmt.Errorf("open merge output: %w", err)
	}
	w.db = db
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open merge output: %w", err)
	}
	w.conn = conn
	stmts := append(append([]string{}, dbfiles.MergedDDL[:mergedTables]...),
		"CREATE TEMP TABLE wmap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create merged tables: %w", err)
		}
	}
	return nil
}

// outputDSN is the output connection's name: a rollback journal, as the
// spec requires of merge results and archives, and no fsync while
// building — the file is a temp file until finish fsyncs and renames it,
// and a crash leaves only a dot-prefixed work file for a sweep.
func outputDSN(path string, cacheKiB int) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(DELETE)")
	q.Add("_pragma", "synchronous(OFF)")
	q.Add("_pragma", "cache_size(-"+strconv.Itoa(cacheKiB)+")")
	q.Add("_pragma", "foreign_keys(OFF)")
	return sqlite.FileURI(path, q)
}

// finish creates the indexes, reads the totals and the inherited cluster
// into res, closes the file, fsyncs it and renames it to its final name
// (fsyncing the folder). On error the caller aborts: the temp file is
// removed and nothing is at the final name.
func (w *output) finish(ctx context.Context, res *Result) error {
	if err := w.createIndexes(ctx); err != nil {
		return err
	}
	if err := w.totals(ctx, res); err != nil {
		return err
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("close merge output: %w", err)
	}
	if err := fsutil.SyncFile(w.tmp); err != nil {
		return fmt.Errorf("sync merge output: %w", err)
	}
	// A merge never overwrites: the name was free when the merge began,
	// check again right before the rename.
	if _, err := os.Lstat(w.out); err == nil {
		return recordstore.Errorf(ErrOutputExists, "%s", w.out)
	}
	if err := fsutil.Rename(w.tmp, w.out); err != nil {
		if errors.Is(err, fsutil.ErrSync) {
			// The rename happened but may not survive a crash: the merge
			// failed, so take the file away again.
			_ = os.Remove(w.out)
		}
		return fmt.Errorf("publish merge output: %w", err)
	}
	return nil
}

// createIndexes creates the merged format's indexes in one transaction:
// building each index once over the loaded rows is cheaper than updating
// nine indexes row by row.
func (w *output) createIndexes(ctx context.Context) error {
	return w.inTx(ctx, func() error {
		for _, s := range dbfiles.MergedDDL[mergedTables:] {
			if _, err := w.conn.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("create merged indexes: %w", err)
			}
		}
		return nil
	})
}

// totals counts the output's rows and finds the cluster it inherits.
func (w *output) totals(ctx context.Context, res *Result) error {
	q := `SELECT (SELECT count(*) FROM workers), (SELECT count(*) FROM events),
		(SELECT count(*) FROM worker_states),
		(SELECT count(DISTINCT coalesce(cluster_name, '')) FROM workers),
		(SELECT coalesce(min(cluster_name), '') FROM workers)`
	var distinct int64
	var cluster string
	err := w.conn.QueryRowContext(ctx, q).Scan(&res.Workers, &res.Events, &res.States, &distinct, &cluster)
	if err != nil {
		return fmt.Errorf("count merged rows: %w", err)
	}
	if distinct == 1 {
		res.Cluster = cluster
	}
	return nil
}

// inTx runs fn inside BEGIN … COMMIT on the connection, rolling back when
// fn fails.
func (w *output) inTx(ctx context.Context, fn func() error) error {
	if _, err := w.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(); err != nil {
		// A rollback uses a fresh context: the caller's may be the reason
		// fn failed.
		if _, rerr := w.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			// The output's state is unknown: that fails the merge.
			return fatalError{errors.Join(err, fmt.Errorf("rollback: %w", rerr))}
		}
		return err
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// close closes the connection and its pool.
func (w *output) close() error {
	var err error
	if w.conn != nil {
		err = w.conn.Close()
		w.conn = nil
	}
	if w.db != nil {
		err = errors.Join(err, w.db.Close())
		w.db = nil
	}
	return err
}

// abort closes the output and removes the temp file and its journal.
func (w *output) abort() {
	_ = w.close()
	for _, p := range []string{w.tmp, w.tmp + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			w.log.Warn("merge_temp_remove_failed", "path", p, "error", err)
		}
	}
}
