// GC: removing abandoned tmp batches, old failed batches and all of trash.

package spool

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Default GC ages.
const (
	DefaultTmpAge    = 24 * time.Hour
	DefaultFailedAge = 30 * 24 * time.Hour
)

// GCOptions configure one GC pass. Zero ages take the defaults.
type GCOptions struct {
	// TmpAge: tmp/* entries whose modification time is older are removed
	// (their producer died mid-publish).
	TmpAge time.Duration
	// FailedAge: failed/* entries older than this are removed.
	FailedAge time.Duration
}

// GCResult lists the entry names a GC pass removed, per folder.
type GCResult struct {
	Tmp    []string `json:"tmp"`
	Failed []string `json:"failed"`
	Trash  []string `json:"trash"`
}

// GC removes tmp/* entries older than TmpAge, failed/* entries older than
// FailedAge (by modification time: a failed batch's folder is touched when
// its error.json is written) and every trash/* entry. Removal is not
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
	now := d.now()
	var res GCResult
	var err error
	if res.Tmp, err = d.sweep(ctx, StateTmp, now.Add(-opts.TmpAge)); err != nil {
		return res, err
	}
	if res.Failed, err = d.sweep(ctx, StateFailed, now.Add(-opts.FailedAge)); err != nil {
		return res, err
	}
	res.Trash, err = d.sweep(ctx, StateTrash, time.Time{})
	return res, err
}

// sweep removes the entries of folder s modified before cutoff (all of
// them when cutoff is zero).
func (d *Dir) sweep(ctx context.Context, s State, cutoff time.Time) ([]string, error) {
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
		if !cutoff.IsZero() {
			fi, err := e.Info()
			if err != nil || !fi.ModTime().Before(cutoff) {
				continue // gone already, or young
			}
		}
		if err := os.RemoveAll(d.Path(s, e.Name())); err != nil {
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
