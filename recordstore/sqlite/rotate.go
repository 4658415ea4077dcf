// Rotate: the writer goes on in a new live file the caller names, with the
// catalog's kinds declared in it and the whole ledger copied, so that a
// batch applied to the old file is never applied to the new one.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// nextFile is the next live file while Rotate prepares it.
type nextFile struct {
	path    string
	created bool // Rotate created the file (and removes it on error)
	w, r    *sql.DB
	ws      *writeStmts
	rs      *readStmts
	tables  []*table
}

// close closes what was opened of the next file and, when Rotate created
// it, removes it with its -wal and -shm files.
func (n *nextFile) close() {
	for _, t := range n.tables {
		_ = t.close()
	}
	_ = n.ws.close()
	_ = n.rs.close()
	if n.r != nil {
		_ = n.r.Close()
	}
	if n.w != nil {
		_ = n.w.Close()
	}
	if n.created {
		for _, p := range []string{n.path, n.path + "-wal", n.path + "-shm", n.path + "-journal"} {
			_ = os.Remove(p)
		}
		_ = fsutil.SyncDir(filepath.Dir(n.path))
	}
}

// Rotate makes newLive the live file and returns the old one. It waits for
// the calls in flight and holds every other call until it returns. In one
// transaction on the new file it creates the bookkeeping tables with this
// writer's epoch, declares every kind of the catalog (so a kind is usable
// in the new file at once; its streams start afresh there, seq from 1) and
// copies the whole ledger, then switches the writer, its statements and
// the reader pool to the new file and closes every connection of the old
// one (SQLite checkpoints its WAL into it as the last one closes; the old
// file can then be sealed, see Seal).
//
// newLive (made absolute) is created 0600, with its folder 0700 when
// missing; a file there that is not empty is refused with ErrInvalid, and
// so is the live file itself. A read-only backend refuses with
// recordstore.ErrReadOnly; a stopped writer with its error.
//
// Followers: the Notifier wakes every waiter. A recordstore.Tail follows
// one generation of a stream, which the new file does not hold: it
// returns nil, and the caller starts a new one (at seq 0) if it wants the
// new file's rows. A recordstore.Wait waits on in the new file, where the
// stream's seqs start again at 1.
//
// On error the old file stays live and unchanged, and newLive is removed
// when this call created it (a file that was there, empty, may have
// gained the bookkeeping tables).
func (b *Backend) Rotate(ctx context.Context, newLive string) (oldLive string, err error) {
	abs, err := checkPath(newLive)
	if err != nil {
		return "", fmt.Errorf("rotate: new live file: %w", err)
	}
	abs = filepath.Clean(abs)
	b.life.Lock()
	defer b.life.Unlock()
	switch {
	case b.closed:
		return "", closedErr(b.path)
	case b.readOnly:
		return "", b.readOnlyErr("rotate")
	case b.failed != nil:
		return "", fmt.Errorf("rotate: %w: %w", ErrWriterFailed, b.failed)
	case abs == b.live:
		return "", recordstore.Invalidf("rotate: %s is the live file already", abs)
	}
	defer b.corrupted(&err)
	next, err := b.prepareNext(ctx, abs)
	if err != nil {
		next.close()
		return "", fmt.Errorf("rotate store %s to %s: %w", b.path, abs, err)
	}
	old := b.live
	if err := b.switchTo(next); err != nil {
		// The new file is live: the error is of closing the old one.
		b.log.Warn("rotate: close the old live file", "file", old, "err", err)
	}
	b.notifier.NotifyAll()
	b.log.Info("rotated", "old", old, "live", abs, "epoch", b.epoch.Load())
	return old, nil
}

// prepareNext creates the next live file and prepares all Rotate switches
// to. The caller holds life exclusively; on error it closes the result.
func (b *Backend) prepareNext(ctx context.Context, path string) (*nextFile, error) {
	n := &nextFile{path: path}
	var err error
	if n.created, err = createEmpty(path); err != nil {
		return n, err
	}
	kinds, err := b.catalogKinds(ctx)
	if err != nil {
		return n, err
	}
	if n.w, err = openWriterDB(ctx, path, b.opts.BusyTimeout, b.opts.NoCheckpoint); err != nil {
		return n, err
	}
	if err := b.seedNext(ctx, n.w, kinds); err != nil {
		return n, err
	}
	if err := fixModes(path); err != nil {
		return n, err
	}
	if n.r, err = b.openReaderDB(ctx, readerDSN(path, b.opts.BusyTimeout)); err != nil {
		return n, err
	}
	if n.ws, err = prepareWriteStmts(ctx, n.w); err != nil {
		return n, err
	}
	if n.rs, err = prepareReadStmts(ctx, n.r); err != nil {
		return n, err
	}
	n.tables, err = readTablesOn(ctx, n.w, n.r)
	return n, err
}

// seedNext writes the next file's bookkeeping tables, epoch, kinds and the
// ledger copied from the live file, in one transaction.
func (b *Backend) seedNext(ctx context.Context, w *sql.DB, kinds []recordstore.Kind) error {
	conn, err := w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("seed new live file: %w", err)
	}
	defer conn.Close()
	names, err := attachCarried(ctx, conn, "", []string{b.live})
	defer detachAll(conn, names)
	if err != nil {
		return err
	}
	now := b.now()
	_, err = initSchema(ctx, conn, seed{carry: names, epoch: b.epoch.Load(), before: b.opts.BeforeCommit, declare: func(tx *sql.Tx) error {
		for _, k := range kinds {
			if _, _, _, err := declareTx(ctx, tx, k, false, now); err != nil {
				return fmt.Errorf("declare kind %s: %w", k.Name, err)
			}
		}
		return nil
	}})
	return err
}

// switchTo makes next the live file, closing every statement and
// connection of the old one. The caller holds life exclusively, so no call
// uses them. Only closing can fail, after the switch.
func (b *Backend) switchTo(next *nextFile) error {
	errs := []error{b.tables.close(), b.ledger.close(), b.ws.close(), b.rs.close(), b.closeDBs()}
	for _, t := range next.tables {
		b.tables.put(t, false)
	}
	b.ledger, b.marks = nil, nil
	b.ledgerSeen.Store(false)
	b.w, b.r, b.ws, b.rs = next.w, next.r, next.ws, next.rs
	b.live = next.path
	b.liveName.Store(&next.path)
	return errors.Join(errs...)
}

// catalogKinds reads the catalog's kinds through the reader pool, for a
// caller that holds life (Kinds enters).
func (b *Backend) catalogKinds(ctx context.Context) ([]recordstore.Kind, error) {
	rows, err := b.r.QueryContext(ctx, `SELECT name, schema FROM record_kinds ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read kinds: %w", err)
	}
	defer rows.Close()
	var out []recordstore.Kind
	for rows.Next() {
		var name, schema string
		if err := rows.Scan(&name, &schema); err != nil {
			return nil, fmt.Errorf("read kinds: %w", err)
		}
		k, err := parseSchema(name, schema)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read kinds: %w", err)
	}
	return out, nil
}

// createEmpty creates path (0600, its folder 0700) for Rotate, and
// reports whether it created it; a file there already must be empty.
func createEmpty(path string) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && (!fi.Mode().IsRegular() || fi.Size() > 0):
		return false, recordstore.Invalidf("%s exists and is not an empty file", path)
	case err == nil:
		return false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("stat new live file: %w", err)
	}
	if err := createLive(path); err != nil {
		return false, err
	}
	return true, nil
}
