// The sweep: with the lock held, delete what stopped passes and stopped
// copies left behind, once older than lock_stale_seconds.

package archive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// sidecars are SQLite's files beside a database, swept with it.
var sidecars = []string{"-wal", "-shm", "-journal"}

// sweepable reports whether name is a leftover the sweep may delete when
// old enough: a work file of a pass (.*.merge.db, .*.tmp — the merge's
// temp files and private copies included —, .*.previous.db) or one of
// their sidecars, a stopped copy (.*.incoming), a clock marker or a lock
// set aside by a takeover.
func sweepable(name string) bool {
	if !strings.HasPrefix(name, ".") || name == dbfiles.ArchiveLockName {
		return false
	}
	if strings.HasPrefix(name, ClockPrefix) || strings.HasPrefix(name, StalePrefix) {
		return true
	}
	base := name
	for _, s := range sidecars {
		base = strings.TrimSuffix(base, s)
	}
	for _, suf := range []string{".merge.db", ".tmp", ".previous.db", ".incoming"} {
		if strings.HasSuffix(base, suf) && len(base) > len(suf)+1 {
			return true
		}
	}
	return false
}

// orphanMeta reports whether name is a meta file whose database is gone.
func orphanMeta(dir, name string) bool {
	db, ok := strings.CutSuffix(name, dbfiles.MetaSuffix)
	if !ok || strings.HasPrefix(name, ".") || !strings.HasSuffix(db, dbfiles.DBSuffix) {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, db))
	return errors.Is(err, fs.ErrNotExist)
}

// sweep deletes the folder's leftovers older than lock_stale_seconds (a
// fresh one may belong to a live copy or pass), logging
// recorder_archive_temp_swept for each.
func (p *pass) sweep() error {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if !sweepable(name) && !orphanMeta(p.dir, name) {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.IsDir() || p.now.Sub(fi.ModTime()) <= p.cfg.LockStale {
			continue
		}
		path := filepath.Join(p.dir, name)
		if err := os.Remove(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				p.log.Warn("recorder_archive_failed", "stage", "sweep", "file", path, "error", err)
			}
			continue
		}
		p.log.Info("recorder_archive_temp_swept", "file", path, "age_seconds", p.now.Sub(fi.ModTime()).Seconds())
		p.rep.Swept = append(p.rep.Swept, name)
		p.emit(Event{Kind: EventSwept, Name: name})
	}
	return nil
}
