// GC: removing abandoned tmp batches, old failed batches and all of trash.

package spool

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Default GC ages.
const (
	DefaultTmpAge      = 24 * time.Hour
	DefaultFailedAge   = 30 * 24 * time.Hour
	DefaultPreparedAge = 10 * time.Minute
)

// GCOptions configure one GC pass. Zero ages take the defaults.
type GCOptions struct {
	// TmpAge: tmp/* entries whose modification time is older are removed
	// (their producer died mid-publish).
	TmpAge time.Duration
	// FailedAge: failed/* entries older than this are removed.
	FailedAge time.Duration
	// PreparedAge: tmp/* folders still as a Dir prepared them (see
	// Options.Prepare: an empty manifest.json and an empty first data
	// file, nothing else) older than this are removed sooner than TmpAge:
	// their producer exited without publishing again. A producer uses a
	// prepared folder only within preparedMaxAge (a minute) of making it,
	// and writes into it at once; should it lose one anyway, it publishes
	// through a fresh folder.
	PreparedAge time.Duration
}

// GCResult lists the entry names a GC pass removed, per folder.
type GCResult struct {
	Tmp    []string `json:"tmp"`
	Failed []string `json:"failed"`
	Trash  []string `json:"trash"`
}

// GC removes tmp/* entries older than TmpAge (prepared folders left
// unused: older than PreparedAge), failed/* entries older than FailedAge
// (by modification time: a failed batch's folder is touched when its
// error.json is written) and every trash/* entry. Removal is not
// atomic: an error may leave some entries removed and others (or parts of
// one) in place; a later pass finishes the job. Only the owner should run
// GC (a young tmp entry may be a producer's publish in progress).
func (d *Dir) GC(ctx context.Context, opts GCOptions) (GCResult, error) {
	if opts.TmpAge <= 0 {
		opts.TmpAge = DefaultTmpAge
	}
	if opts.FailedAge <= 0 {
		opts.FailedAge = DefaultFailedAge
	}
	if opts.PreparedAge <= 0 {
		opts.PreparedAge = DefaultPreparedAge
	}
	now := d.now()
	olderThan := func(age time.Duration) func(string, os.DirEntry) bool {
		cutoff := now.Add(-age)
		return func(_ string, e os.DirEntry) bool {
			fi, err := e.Info()
			return err == nil && fi.ModTime().Before(cutoff) // else gone already, or young
		}
	}
	oldTmp, oldPrepared := olderThan(opts.TmpAge), olderThan(opts.PreparedAge)
	var res GCResult
	var err error
	if res.Tmp, err = d.sweep(ctx, StateTmp, func(path string, e os.DirEntry) bool {
		return oldTmp(path, e) || e.IsDir() && oldPrepared(path, e) && unusedPrepared(path)
	}); err != nil {
		return res, err
	}
	if res.Failed, err = d.sweep(ctx, StateFailed, olderThan(opts.FailedAge)); err != nil {
		return res, err
	}
	res.Trash, err = d.sweep(ctx, StateTrash, func(string, os.DirEntry) bool { return true })
	return res, err
}

// sweep removes the entries of folder s that remove selects (given the
// entry's path), and fsyncs the folder when it removed any.
func (d *Dir) sweep(ctx context.Context, s State, remove func(path string, e os.DirEntry) bool) ([]string, error) {
	dir := d.folder(s)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("gc %s: %w", s, err)
	}
	var removed []string
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		path := d.Path(s, e.Name())
		if !remove(path, e) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return removed, fmt.Errorf("gc %s/%s: %w", s, e.Name(), err)
		}
		removed = append(removed, e.Name())
	}
	if len(removed) > 0 {
		if err := d.fs.SyncDir(dir); err != nil {
			return removed, fmt.Errorf("gc %s: %w", s, err)
		}
		d.log.Debug("spool gc", "folder", string(s), "removed", len(removed))
	}
	return removed, nil
}

// unusedPrepared reports whether folder holds exactly an empty
// manifest.json and an empty first data file.
func unusedPrepared(folder string) bool {
	ents, err := os.ReadDir(folder)
	if err != nil || len(ents) != 2 {
		return false
	}
	manifest, data := false, false
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			return false
		}
		switch name := e.Name(); {
		case name == ManifestFile:
			manifest = true
		case strings.HasPrefix(name, dataFileName(0, "")):
			data = true
		}
	}
	return manifest && data
}
