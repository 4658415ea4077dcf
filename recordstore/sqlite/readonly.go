// Read-only mode: opening an existing live file without writing, checking a
// mutation locally, and handing it to Options.Submit as a one-entry batch
// for the store's owner to apply.

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"modernc.org/sqlite"

	"github.com/fb46ecde/records/recordstore"
)

// openReadOnly is Open's list of steps in read-only mode. It writes
// nothing: no folder, no table, no epoch.
func (b *Backend) openReadOnly(ctx context.Context) error {
	fi, err := os.Stat(b.live)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound("live file %s does not exist (a read-only open needs a store that was opened writable)", b.live)
		}
		return fmt.Errorf("stat live file: %w", err)
	}
	// Stat before SQLite opens it: a file put at the path in between is
	// then refused by Promote rather than taken for the one stat saw.
	b.opened = fi
	err = b.openCheckedReaders(ctx)
	if err != nil && b.opts.ReadOnlyFile && cannotShare(err) && !walHasContent(b.live) {
		// SQLite needs to create the -shm file for mode=ro and the folder
		// cannot be written: with no WAL content, the file holds every
		// commit and nobody can be writing it, so it is read as immutable.
		_ = b.r.Close()
		b.r, b.immutable = nil, true
		err = b.openCheckedReaders(ctx)
	}
	if err != nil {
		return err
	}
	// Watch from before the catalog is read, so that no later change of it
	// is missed.
	if b.watch0, err = b.openWatcher(ctx); err != nil {
		return err
	}
	epoch, err := readEpoch(ctx, b.r)
	if err != nil {
		return err
	}
	b.epoch.Store(epoch)
	if err := b.r.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&b.schemaVersion); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if b.rs, err = prepareReadStmts(ctx, b.r); err != nil {
		return err
	}
	return b.loadKinds(ctx)
}

// openCheckedReaders opens the reader pool and checks that the live file
// has this build's catalog.
func (b *Backend) openCheckedReaders(ctx context.Context) error {
	if err := b.openReaders(ctx); err != nil {
		return err
	}
	return checkReadable(ctx, b.r)
}

// SQLite's result codes of a read-only open that could not set up the
// shared WAL index beside the file.
const (
	sqliteCantOpen          = 14   // SQLITE_CANTOPEN
	sqliteReadOnlyDirectory = 1544 // SQLITE_READONLY_DIRECTORY
)

// cannotShare reports whether err is SQLite failing to open or create the
// live file's -shm file: the folder cannot be written.
func cannotShare(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqliteReadOnlyDirectory || se.Code()&0xff == sqliteCantOpen
}

// readOnlyErr is what a mutation of a read-only backend without Submit
// (and AppendBatch, Sweep, SweepBatches on any read-only backend) returns.
func (b *Backend) readOnlyErr(what string) error {
	return fmt.Errorf("%s: %w: store %s is open read-only", what, recordstore.ErrReadOnly, b.path)
}

// submit hands one entry to Options.Submit as a batch carrying schemas,
// through recordstore.SubmitBatch, and returns the entry's result. An
// error of Submit itself (the owner could not be reached, or ctx ended
// first: the owner's *PendingError) is returned unchanged; an error the
// owner recorded for the batch or the entry is a *recordstore.BatchError,
// wrapped with what, so that errors.Is finds its sentinel. The caller must
// not hold life: Submit may wait for this very process to be promoted and
// apply the batch.
func (b *Backend) submit(ctx context.Context, what string, schemas []recordstore.Kind, e recordstore.BatchEntry) (recordstore.EntryResult, error) {
	if b.opts.Submit == nil {
		return recordstore.EntryResult{}, b.readOnlyErr(what)
	}
	res, err := recordstore.SubmitBatch(ctx, b.opts.Submit, what, recordstore.Batch{Schemas: schemas, Entries: []recordstore.BatchEntry{e}})
	if err != nil {
		return recordstore.EntryResult{}, err
	}
	return res.Entries[0], nil
}

// declareReadOnly declares k through Submit, unless the catalog has it
// already as declared (KindUnchanged, nothing submitted) or k conflicts
// with it (refused here). The declared kind is then read from the catalog.
func (b *Backend) declareReadOnly(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	what := "declare kind " + k.Name
	status, err := b.checkDeclare(ctx, k)
	if err != nil {
		return "", err
	}
	if status == recordstore.KindUnchanged {
		return status, nil
	}
	r, err := b.submit(ctx, what, []recordstore.Kind{k}, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: k.Name})
	if err != nil {
		return "", err
	}
	if err := b.adopt(ctx, k.Name); err != nil {
		return r.Status, fmt.Errorf("%s: %w", what, err)
	}
	return r.Status, nil
}

// checkDeclare reconciles k with the catalog's declaration (a conflict is
// returned as "declare kind K: ..."), then holds it to the declaration
// rules unless it is the stored kind as it is (checkDeclaration; its error,
// which names the kind, is returned as it is).
func (b *Backend) checkDeclare(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	status, err := b.reconcileCatalog(ctx, k)
	if err != nil {
		return "", fmt.Errorf("declare kind %s: %w", k.Name, err)
	}
	return status, checkDeclaration(&k, status)
}

// reconcileCatalog reconciles k with the catalog's declaration: the cached
// one, or when that does not say "unchanged", the one in the file now. A
// kind the catalog lacks is KindCreated.
func (b *Backend) reconcileCatalog(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	if err := b.enter(); err != nil {
		return "", err
	}
	defer b.leave()
	t := b.tables.get(k.Name)
	if t != nil {
		if _, status, err := recordstore.Reconcile(t.kind, k, false); err == nil && status == recordstore.KindUnchanged {
			return status, nil
		}
	}
	t, err := b.reloadTable(ctx, k.Name)
	if errors.Is(err, recordstore.ErrNotFound) {
		return recordstore.KindCreated, nil
	}
	if err != nil {
		return "", err
	}
	_, status, err := recordstore.Reconcile(t.kind, k, false)
	return status, err
}

// adopt reads a kind the owner declared from the catalog.
func (b *Backend) adopt(ctx context.Context, kind string) error {
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	_, err := b.reloadTable(ctx, kind)
	return err
}

// appendReadOnly checks an append locally and submits the batch that
// carries it (see PrepareAppend): the rows normalized in the catalog kind's
// column order.
func (b *Backend) appendReadOnly(ctx context.Context, stream, kind string, rows []recordstore.Row) (recordstore.AppendResult, error) {
	batch, err := b.PrepareAppend(ctx, stream, kind, nil, rows)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	return b.submitAppend(ctx, stream, batch)
}

// submitAppend submits a prepared append's batch (one append entry, see
// PrepareAppend) and returns the owner's window for it.
func (b *Backend) submitAppend(ctx context.Context, stream string, batch recordstore.Batch) (recordstore.AppendResult, error) {
	r, err := b.submit(ctx, "append to "+stream, batch.Schemas, batch.Entries[0])
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	if r.Append == nil {
		return recordstore.AppendResult{}, fmt.Errorf("append to %s: the owner's result has no append window", stream)
	}
	b.notifier.Notify(stream)
	return *r.Append, nil
}

// checkAppend is PrepareAppend's check of rows against the catalog's kind.
// A kind this process does not know yet, or rows naming columns it does
// not know, make it read the kind from the catalog again once: another
// process may have declared them. Errors say "append to stream".
func (b *Backend) checkAppend(ctx context.Context, stream, kind string, rows []recordstore.Row) (*table, []recordstore.Values, error) {
	what := "append to " + stream
	t, vals, err := b.checkCatalogRows(ctx, kind, rows)
	if err == nil && !b.knownTakes(stream, t.kind.Name) {
		err = b.checkStreamTakes(ctx, stream, t.kind.Name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return t, vals, nil
}

// checkCatalogRows normalizes rows for the catalog's kind, reading it
// again once when they do not fit what this process holds.
func (b *Backend) checkCatalogRows(ctx context.Context, kind string, rows []recordstore.Row) (*table, []recordstore.Values, error) {
	if err := b.enter(); err != nil {
		return nil, nil, err
	}
	defer b.leave()
	t, err := b.table(ctx, kind)
	if err != nil {
		return nil, nil, err
	}
	vals, err := t.normalize(rows)
	if err != nil {
		fresh, rerr := b.reloadTable(ctx, kind)
		if rerr != nil || len(fresh.kind.Columns) == len(t.kind.Columns) {
			return nil, nil, err
		}
		t = fresh
		if vals, err = t.normalize(rows); err != nil {
			return nil, nil, err
		}
	}
	return t, vals, nil
}

// SetTakesHint installs known, which a read-only backend's append check
// asks first: when it reports that stream takes an append of kind (live
// of that kind, not sealed: the owner's store knows it from its own
// appends and the owner's commit notices), the stream is not read from
// the file (checkStreamTakes). Without it, or when it reports false, the
// stream is read. nil removes it. An append the hint let through to a
// stream another process sealed meanwhile is refused by the owner, with
// the same error, as one that races the read would be.
func (b *Backend) SetTakesHint(known func(stream, kind string) bool) {
	if known == nil {
		b.takesHint.Store(nil)
		return
	}
	b.takesHint.Store(&known)
}

// knownTakes asks the hint installed by SetTakesHint, if any.
func (b *Backend) knownTakes(stream, kind string) bool {
	h := b.takesHint.Load()
	return h != nil && (*h)(stream, kind)
}

// checkStreamTakes refuses, as the owner would, an append of kind to a
// live stream of another kind (ErrSchemaConflict) or to a sealed one
// (ErrSealed). A stream that is not live is created by the append.
func (b *Backend) checkStreamTakes(ctx context.Context, stream, kind string) error {
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	s, found, err := loadStream(ctx, b.rs.getStream, stream)
	if err != nil || !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return err
	}
	if s.kind != kind {
		return schemaConflict("stream %s has kind %s, not %s", stream, s.kind, kind)
	}
	if s.sealed {
		return sealed(stream)
	}
	return nil
}

// mutateReadOnly checks a stream mutation locally (see PrepareEntry) and
// submits it.
func (b *Backend) mutateReadOnly(ctx context.Context, e recordstore.BatchEntry) (recordstore.Meta, error) {
	batch, err := b.PrepareEntry(ctx, e)
	if err != nil {
		return recordstore.Meta{}, err
	}
	r, err := b.submit(ctx, string(e.Op)+" "+e.Stream, nil, batch.Entries[0])
	if err != nil {
		return recordstore.Meta{}, err
	}
	b.notifier.Notify(e.Stream)
	if r.Meta == nil {
		return recordstore.Meta{}, nil // delete
	}
	return *r.Meta, nil
}

// checkLive refuses (ErrNotFound) a mutation of a stream that is not live,
// or for reopen not at e.Generation.
func (b *Backend) checkLive(ctx context.Context, e recordstore.BatchEntry) error {
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	s, found, err := loadStream(ctx, b.rs.getStream, e.Stream)
	if err != nil {
		return err
	}
	if !found || !s.live(recordstore.FormatDatetime(b.now())) {
		return notFound("stream %s", e.Stream)
	}
	if e.Op == recordstore.OpReopen && s.generation != e.Generation {
		return notFound("stream %s: generation %d is not the current one (%d)", e.Stream, e.Generation, s.generation)
	}
	return nil
}
