// Promote: a read-only backend becomes writable in place, so that every
// holder of the *Backend keeps using the same value.

package sqlite

import (
	"context"
	"fmt"
)

// Promote makes a read-only backend writable in place: it stops following
// the change feed, opens the writer (creating any bookkeeping table the
// file lacks), increments the epoch, reloads the kinds with the writer's
// statements and starts the retention sweeper. Calls in flight finish
// first and later calls write directly; readers never stop working. It is
// for the process that has just become the store's owner (it holds the
// store's lock). Promote on a writable backend returns nil.
//
// It first checks that the live file's path still names the file Open
// opened (see CheckLiveFile): when the store was deleted, or another file
// was put at the path since, it refuses with an error wrapping
// ErrLiveFileGone (and recordstore.ErrNotFound) and writes nothing — no
// file is created, no sidecar's mode changed, no epoch written; the
// backend stays read-only, its reads going on in the file it opened.
//
// On any other error the backend stays read-only and follows the change
// feed again; the epoch may have been incremented already (the file is
// otherwise unchanged, or has gained bookkeeping tables).
func (b *Backend) Promote(ctx context.Context) error {
	b.promoteMu.Lock()
	defer b.promoteMu.Unlock()
	if err := b.enter(); err != nil {
		return err
	}
	ro := b.readOnly
	b.leave()
	if b.opts.ReadOnlyFile {
		return b.readOnlyErr("promote")
	}
	if !ro {
		return nil
	}
	if b.opts.BeforePromote != nil {
		if err := b.opts.BeforePromote(ctx); err != nil {
			return fmt.Errorf("promote store %s: %w", b.path, err)
		}
	}
	// The feed refreshes the catalog under life: stop it before taking
	// life exclusively.
	b.stopFeed()
	if err := b.promote(ctx); err != nil {
		b.startFeed(nil)
		return fmt.Errorf("promote store %s: %w", b.path, err)
	}
	b.startSweeper()
	b.log.Info("promoted", "epoch", b.epoch.Load())
	return nil
}

// promote is Promote's list of steps, with life held exclusively so that
// no call sees half of it.
func (b *Backend) promote(ctx context.Context) (err error) {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return closedErr(b.path)
	}
	defer func() {
		if err != nil {
			b.closeWriter()
			b.unwritable(&err)
		}
	}()
	// Before anything touches the path: SQLite would create a file there.
	if err := b.checkLiveFileLocked(); err != nil {
		return err
	}
	b.matchSidecarModes()
	if err := b.openWriter(ctx); err != nil {
		return err
	}
	epoch, err := b.initSchemaCarrying(ctx)
	if err != nil {
		return err
	}
	if err := fixModes(b.live); err != nil {
		return err
	}
	if b.ws, err = prepareWriteStmts(ctx, b.w); err != nil {
		return err
	}
	tables, err := b.readTables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		b.tables.put(t, false)
	}
	b.epoch.Store(epoch)
	b.readOnly = false
	return nil
}
