// Write transactions: one at a time on the single writer connection, with
// BEGIN IMMEDIATE, and the bookkeeping statements they use.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// lockWrite waits for the right to run a write transaction, or for ctx.
// It fails with ErrWriterFailed once the writer saw an I/O error, and with
// ErrFenced once a newer epoch fenced it.
func (b *Backend) lockWrite(ctx context.Context) error {
	select {
	case b.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if b.failed != nil {
		<-b.wsem
		if errors.Is(b.failed, ErrFenced) {
			return b.failed
		}
		return fmt.Errorf("%w: %w", ErrWriterFailed, b.failed)
	}
	return nil
}

func (b *Backend) unlockWrite() { <-b.wsem }

// inTxLocked runs fn in one write transaction; the caller holds the write
// lock. fn gets the clock's time, read once. When fn or the commit fails the
// transaction is rolled back (the driver rolls back a failed COMMIT too)
// and nothing fn wrote is stored. An I/O error, or a damaged page
// (ErrCorrupt: writing on could spread the damage), stops the writer for
// good (ErrWriterFailed on every later write); reads go on. A full disk
// (SQLITE_FULL, see DiskFull) is recordstore.ErrDiskFull and does not stop
// the writer: SQLite rolled the transaction back, and a write succeeds
// again once space is freed.
func (b *Backend) inTxLocked(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) (err error) {
	defer func() {
		b.corrupted(&err)
		switch {
		case err == nil:
		case DiskFull(err) && !errors.Is(err, recordstore.ErrDiskFull):
			err = recordstore.Errorf(recordstore.ErrDiskFull, "live file %s: %w", b.live, err)
		case ctx.Err() != nil && !isIOError(err) && !isDamaged(err) && !errors.Is(err, ctx.Err()):
			// The caller's context ended the transaction (database/sql
			// rolls it back and closes its statements on its own): say so
			// with the context's error, not with the statement that
			// happened to fail next. Nothing was stored.
			err = fmt.Errorf("%w (the transaction was rolled back: %w)", context.Cause(ctx), err)
		case isIOError(err):
			b.failed = err
			b.log.Error("writer stopped after an I/O error; reopen the store", "err", err)
		case isDamaged(err): // SQLite's own finding, not a contradiction of the catalog
			b.failed = err
			b.log.Error("writer stopped: the live file is damaged; restore it from a backup", "err", err)
		}
	}()
	conn, err := b.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close() // back to the pool, after the commit or rollback
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	b.txConn = conn
	defer func() { b.txConn = nil }()
	err = fn(tx, b.now())
	if err == nil && b.opts.BeforeCommit != nil {
		err = b.opts.BeforeCommit()
	}
	if err != nil {
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) && !noTransaction(rerr) {
			b.log.Warn("rollback failed", "err", rerr)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// writeTx takes the write lock and runs fn in one write transaction (see
// inTxLocked).
func (b *Backend) writeTx(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	if err := b.lockWrite(ctx); err != nil {
		return err
	}
	defer b.unlockWrite()
	return b.inTxLocked(ctx, fn)
}

// writeStmts are the bookkeeping statements of write transactions,
// prepared on the writer connection.
type writeStmts struct {
	getStream, newStream, putStream, updateCounters                 *sql.Stmt
	insertAppend, appendsBefore, deleteAppendsBefore, deleteAppends *sql.Stmt
}

const (
	sqlGetStream = `SELECT no, kind, generation, high_seq, low_seq, total, sealed, deleted,
		created_at, updated_at, expires_at FROM record_streams WHERE id = ?1`
	sqlNewStream = `INSERT INTO record_streams (id, kind, generation, high_seq, low_seq, total,
		sealed, deleted, created_at, updated_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`
	sqlPutStream = `UPDATE record_streams SET kind = ?2, generation = ?3, high_seq = ?4, low_seq = ?5,
		total = ?6, sealed = ?7, deleted = ?8, created_at = ?9, updated_at = ?10, expires_at = ?11
		WHERE no = ?1`
	sqlUpdateCounters = `UPDATE record_streams SET high_seq = ?2, low_seq = ?3, total = ?4, updated_at = ?5
		WHERE no = ?1`
	sqlInsertAppend = `INSERT INTO record_appends (stream, appended_at, from_seq, to_seq, generation)
		VALUES (?1, ?2, ?3, ?4, ?5)`
	sqlAppendsBefore       = `SELECT from_seq, to_seq FROM record_appends WHERE stream = ?1 AND appended_at < ?2`
	sqlDeleteAppendsBefore = `DELETE FROM record_appends WHERE stream = ?1 AND appended_at < ?2`
	sqlDeleteAppends       = `DELETE FROM record_appends WHERE stream = ?1`
)

func prepareWriteStmts(ctx context.Context, w *sql.DB) (*writeStmts, error) {
	s := &writeStmts{}
	for _, p := range []struct {
		sql string
		dst **sql.Stmt
	}{
		{sqlGetStream, &s.getStream},
		{sqlNewStream, &s.newStream},
		{sqlPutStream, &s.putStream},
		{sqlUpdateCounters, &s.updateCounters},
		{sqlInsertAppend, &s.insertAppend},
		{sqlAppendsBefore, &s.appendsBefore},
		{sqlDeleteAppendsBefore, &s.deleteAppendsBefore},
		{sqlDeleteAppends, &s.deleteAppends},
	} {
		st, err := w.PrepareContext(ctx, p.sql)
		if err != nil {
			_ = s.close()
			return nil, fmt.Errorf("prepare bookkeeping statements: %w", err)
		}
		*p.dst = st
	}
	return s, nil
}

func (s *writeStmts) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, st := range []*sql.Stmt{s.getStream, s.newStream, s.putStream, s.updateCounters, s.insertAppend,
		s.appendsBefore, s.deleteAppendsBefore, s.deleteAppends} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// readStmts are the statements of reads, prepared on the reader pool.
type readStmts struct {
	getStream *sql.Stmt

	mu        sync.Mutex
	ledgerGet *sql.Stmt // prepared on first use: the ledger may not exist at open
}

func prepareReadStmts(ctx context.Context, r *sql.DB) (*readStmts, error) {
	st, err := r.PrepareContext(ctx, sqlGetStream)
	if err != nil {
		return nil, fmt.Errorf("prepare read statements: %w", err)
	}
	return &readStmts{getStream: st}, nil
}

// ledgerGetStmt returns the ledger lookup by batch id, prepared on r the
// first time (the caller has seen the ledger table): parsing it again for
// every outcome asked for cost a tenth of an owner's CPU per append.
func (s *readStmts) ledgerGetStmt(ctx context.Context, r *sql.DB) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ledgerGet == nil {
		st, err := r.PrepareContext(ctx, sqlLedgerGet)
		if err != nil {
			return nil, fmt.Errorf("prepare the ledger lookup: %w", err)
		}
		s.ledgerGet = st
	}
	return s.ledgerGet, nil
}

func (s *readStmts) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, st := range []*sql.Stmt{s.getStream, s.ledgerGet} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
