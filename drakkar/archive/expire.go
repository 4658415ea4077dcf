// Expiry: archives whose window ended more than retention_days ago, and
// merge results in merged/ older than merged_retention_days, on the file
// server's clock.

package archive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// expire runs both expiries; a fenced pass stops deleting.
func (p *pass) expire() error {
	if err := p.expireArchives(); err != nil {
		return err
	}
	return p.pruneMerged()
}

// expireArchives deletes the folder's archives whose window ended more
// than Retention ago (none when Retention is 0).
func (p *pass) expireArchives() error {
	if p.cfg.Retention == 0 {
		return nil
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		cluster, _, to, ok := dbfiles.ParseArchiveName(e.Name())
		if !ok || cluster != p.cluster || p.now.Sub(to) <= p.cfg.Retention {
			continue
		}
		if !p.lk.holds() {
			return nil
		}
		if err := os.Remove(filepath.Join(p.dir, e.Name())); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				p.log.Warn("recorder_archive_failed", "stage", "expire", "archive", e.Name(), "error", err)
			}
			continue
		}
		p.log.Info("recorder_archive_expired", "archive", e.Name(), "window_end", to)
		p.rep.Expired = append(p.rep.Expired, e.Name())
		p.emit(Event{Kind: EventExpired, Name: e.Name()})
	}
	return nil
}

// pruneMerged deletes the merge results in <shared>/merged/*.db older than
// MergedRetention (none when it is 0).
func (p *pass) pruneMerged() error {
	if p.cfg.MergedRetention == 0 {
		return nil
	}
	dir := dbfiles.MergedDir(p.opts.Shared)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, dbfiles.DBSuffix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil || p.now.Sub(fi.ModTime()) <= p.cfg.MergedRetention {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.Remove(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				p.log.Warn("recorder_archive_failed", "stage", "prune_merged", "file", path, "error", err)
			}
			continue
		}
		p.log.Info("recorder_merged_pruned", "file", path, "age_seconds", p.now.Sub(fi.ModTime()).Seconds())
		p.rep.Pruned = append(p.rep.Pruned, name)
		p.emit(Event{Kind: EventPruned, Name: name})
	}
	return nil
}
