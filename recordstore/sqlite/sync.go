// Sync: making committed transactions durable against a power loss on
// demand, while commits themselves stay fast (synchronous=NORMAL).

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// Sync makes every transaction committed so far survive a power loss, as
// synchronous=FULL would have at each commit: it fsyncs the live file's
// WAL (what a checkpoint moved into the live file was fsynced by the
// checkpoint). A process crash never needed it: see "What survives a
// crash". The owner calls it before it lets go of the spool folders of
// the batches it applied, which are their durable copy until then.
//
// It waits for the write lock (honouring ctx). A failed fsync stops the
// writer like an I/O error of a transaction (ErrWriterFailed on every
// later write) and is returned wrapping recordstore.ErrFsync. A read-only backend
// returns an error wrapping recordstore.ErrReadOnly.
func (b *Backend) Sync(ctx context.Context) error {
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	if b.readOnly {
		return b.readOnlyErr("sync")
	}
	if err := b.lockWrite(ctx); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	defer b.unlockWrite()
	err := b.syncWAL()
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		// No WAL: everything is in the live file, fsynced by the
		// checkpoint that removed it.
		return nil
	case errors.Is(err, fsutil.ErrSync):
		b.failed = err
		b.log.Error("writer stopped after a failed fsync of the WAL; reopen the store", "err", err)
	}
	return fmt.Errorf("sync: %w", err)
}

// syncWAL flushes the live file's WAL through a descriptor kept open from
// one Sync to the next (fsutil.KeptSync: no open and close on the commit
// path of the owner's fast path), opened again when the live file changed
// (Rotate) or the WAL was removed and made again. Write lock held.
//
// It flushes the WAL's data only (fsutil.KeepDataSync: fdatasync on
// Linux), which is as durable as an fsync here: SQLite only ever writes
// frames into the WAL, in place over an old log after a checkpoint reset
// it or past its end, and truncates it; the frames are data, and a size
// changed by the growth or the truncation is metadata a data sync flushes
// (it is needed to read the data back). What it leaves out — the file's
// modification and change times — nothing reads. The WAL's folder entry
// is what it was with an fsync, which does not flush the folder either.
func (b *Backend) syncWAL() error {
	wal := b.live + "-wal"
	if b.walSync == nil || b.walSync.Path() != wal {
		if b.walSync != nil {
			_ = b.walSync.Close()
		}
		b.walSync = fsutil.Default.KeepDataSync(wal)
	}
	return b.walSync.Sync()
}

// closeWALSync closes the WAL's kept descriptor (Close, life held).
func (b *Backend) closeWALSync() error {
	if b.walSync == nil {
		return nil
	}
	return b.walSync.Close()
}
