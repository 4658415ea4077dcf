package debugapi

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"modernc.org/sqlite"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	rsqlite "github.com/fb46ecde/records/recordstore/sqlite"
)

// backuper is the modernc.org/sqlite driver connection's backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// srcQuery opens the live file for the copy: read-only, waiting out a
// writer's lock, and read through mmap (the pages not in the WAL are then
// a memcpy each instead of a pread).
var srcQuery = url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(10000)", "mmap_size(1073741824)"}}

// dstQuery opens the copy while the pages go in: it is private until
// complete (a failed copy is removed), so no journal and no sync. Its page
// cache is kept to 16 pages: each page is written once and never read
// again, and a small cache (whose buffers presumably stay in the CPU's
// caches) made the step about 10% faster than the default 2,000 pages in
// side-by-side runs (a 1 GB one made it slower). locking_mode=EXCLUSIVE made no measurable difference (the one
// step is one write transaction, so one lock) and is left out.
var dstQuery = url.Values{"_pragma": {"journal_mode(OFF)", "synchronous(OFF)", "cache_size(16)"}}

// finishQuery reopens the copy to switch it to a rollback journal. The
// copy is read once and unlinked, never kept: synchronous=OFF spares the
// fsync of the whole file that leaving WAL mode would otherwise cost
// (measured at a third of a 225 MB snapshot's time, docs/performance.md).
var finishQuery = url.Values{"_pragma": {"synchronous(OFF)"}}

// Snapshot copies the SQLite database src to dst (which must not exist)
// with SQLite's online backup API, on a read-only connection of its own,
// so that a writer of src keeps writing meanwhile: the copy is the state
// of one read transaction (all pages are copied in one step). dst is then
// switched to a rollback journal, so it opens on its own, and is created
// 0600. dst is not synced to disk: it is meant to be read and removed,
// and a crash may leave it incomplete. On error dst and its journal files
// are removed.
func Snapshot(ctx context.Context, src, dst string) (err error) {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	_ = f.Close()
	defer func() {
		if err != nil {
			for _, p := range []string{dst, dst + "-journal", dst + "-wal", dst + "-shm"} {
				_ = os.Remove(p)
			}
		}
	}()
	if err := backup(ctx, src, dst); err != nil {
		return err
	}
	out, err := sql.Open("sqlite", rsqlite.FileURI(dst, finishQuery))
	if err != nil {
		return err
	}
	defer out.Close()
	var mode string
	if err := out.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("journal mode is %s", mode)
	}
	return out.Close()
}

// backup copies every page of src into dst in one backup step, so in one
// read transaction of src. dst keeps src's header, which says WAL when
// src is in WAL mode.
func backup(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", rsqlite.FileURI(src, srcQuery))
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		b, ok := dc.(backuper)
		if !ok {
			return errors.New("the SQLite driver has no backup API")
		}
		bk, err := b.NewBackup(rsqlite.FileURI(dst, dstQuery))
		if err != nil {
			return err
		}
		// Step(-1) copies every page in one call; a step of fewer pages
		// would restart from the first page each time the recorder
		// commits in between.
		for more := true; more; {
			if more, err = bk.Step(-1); err != nil {
				_ = bk.Finish()
				return err
			}
		}
		return bk.Finish()
	})
}

// downloadLive serves GET /api/v1/debug/download-live: a snapshot of the
// live file in an owner-only temp file in storage.dir, unlinked before the
// answer starts and streamed from its descriptor.
func (s *server) downloadLive(w http.ResponseWriter, r *http.Request) {
	live := ""
	if s.opts.Recorder != nil && s.opts.Config.StorageDir != "" {
		live = s.opts.Recorder.LiveFile()
	}
	if live == "" {
		writeError(w, http.StatusNotFound, TextNoLiveFile)
		return
	}
	tmp := filepath.Join(s.opts.Config.StorageDir, ".snapshot-"+dbfiles.NewHex16()+".db")
	if err := Snapshot(r.Context(), live, tmp); err != nil {
		s.log.Error("debugapi_snapshot_failed", "err", err)
		writeError(w, http.StatusInternalServerError, TextSnapshotFail+err.Error())
		return
	}
	f, err := os.Open(tmp)
	_ = os.Remove(tmp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, TextSnapshotFail+err.Error())
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusInternalServerError, TextSnapshotFail+err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-sqlite3")
	h.Set("Content-Disposition", `attachment; filename="`+filepath.Base(live)+`"`)
	h.Set("Cache-Control", "no-store, private")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.CopyN(w, f, fi.Size()); err != nil {
		s.log.Warn("debugapi_download_live_failed", "err", err)
	}
}
