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
)

// backuper is the modernc.org/sqlite driver connection's backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// Snapshot copies the SQLite database src to dst (which must not exist)
// with SQLite's online backup API, on a read-only connection of its own,
// so that a writer of src keeps writing meanwhile: the copy is the state
// of one read transaction (all pages are copied in one step). dst is then
// switched to a rollback journal, so it opens on its own, and is created
// 0600. On error dst and its journal files are removed.
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
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: src, RawQuery: "mode=ro&_pragma=busy_timeout(10000)&_pragma=mmap_size(1073741824)"}).String())
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		b, ok := dc.(backuper)
		if !ok {
			return errors.New("the SQLite driver has no backup API")
		}
		// The copy is private until it is complete: no journal, no sync
		// while the pages go in (a failed copy is removed).
		bk, err := b.NewBackup((&url.URL{Scheme: "file", OmitHost: true, Path: dst,
			RawQuery: "_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)"}).String())
		if err != nil {
			return err
		}
		for more := true; more; {
			if more, err = bk.Step(-1); err != nil {
				_ = bk.Finish()
				return err
			}
		}
		return bk.Finish()
	})
	if err != nil {
		return err
	}
	out, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: dst}).String())
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
