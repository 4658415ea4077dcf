// The spool ledger (record_spool_batches): one row per applied batch,
// written in the transaction that applied it, so that a batch is applied
// exactly once. Reading an outcome, a producer's high-water mark, and
// sweeping old rows.

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ledgerDDL creates the ledger. It is created by the first AppendBatch,
// not by Open, so that a file whose owner never applies a batch has no
// ledger. results is the JSON of the entries' results and the batch's
// error (ledgerResults).
var ledgerDDL = []string{
	`CREATE TABLE IF NOT EXISTS record_spool_batches (
		batch_id     TEXT PRIMARY KEY NOT NULL,
		producer     TEXT NOT NULL,
		producer_seq INTEGER NOT NULL,
		epoch        INTEGER NOT NULL,
		outcome      TEXT NOT NULL,
		results      TEXT NOT NULL,
		ingested_at  TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS record_spool_batches_producer ON record_spool_batches (producer, producer_seq)`,
	`CREATE INDEX IF NOT EXISTS record_spool_batches_ingested ON record_spool_batches (ingested_at)`,
}

const (
	sqlLedgerGet = `SELECT outcome, epoch, results, ingested_at FROM record_spool_batches WHERE batch_id = ?1`
	sqlEpoch     = `SELECT value FROM record_meta WHERE key = 'epoch'`
	// sqlProducerMark is a producer's highest seq in the ledger (0: none).
	sqlProducerMark = `SELECT coalesce(max(producer_seq), 0) FROM record_spool_batches WHERE producer = ?1`
	// sqlLedgerForget removes the failure record of a batch retried
	// (recordstore.Batch.Retry), in the transaction that records it anew.
	sqlLedgerForget = `DELETE FROM record_spool_batches WHERE batch_id = ?1 AND outcome = 'failed'`
)

// ledgerResults is the JSON of the ledger's results column.
type ledgerResults struct {
	Entries []recordstore.EntryResult `json:"entries"`
	Error   *recordstore.BatchError   `json:"error,omitempty"`
}

// ledgerStmts are the writer's statements of AppendBatch: the ledger, the
// epoch check, and the savepoint around each entry.
type ledgerStmts struct {
	get, getMany, put, putMany, epoch, mark *sql.Stmt
	savepoint, release, rollbackTo          *sql.Stmt
}

// ensureLedgerLocked creates the ledger if the file lacks it and prepares
// the writer's ledger statements, once. The caller holds the write lock.
// On error nothing was written.
func (b *Backend) ensureLedgerLocked(ctx context.Context) error {
	if b.ledger != nil {
		return nil
	}
	err := b.inTxLocked(ctx, func(tx *sql.Tx, _ time.Time) error {
		for _, ddl := range ledgerDDL {
			if _, err := tx.ExecContext(ctx, ddl); err != nil {
				return fmt.Errorf("create ledger: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.ledgerSeen.Store(true)
	s := &ledgerStmts{}
	for _, p := range []struct {
		sql string
		dst **sql.Stmt
	}{
		{sqlLedgerGet, &s.get},
		{ledgerGetSQL(ledgerGetChunk), &s.getMany},
		{ledgerPutSQL(1), &s.put},
		{ledgerPutSQL(ledgerPutChunk), &s.putMany},
		{sqlEpoch, &s.epoch},
		{sqlProducerMark, &s.mark},
		{"SAVEPOINT entry", &s.savepoint},
		{"RELEASE entry", &s.release},
		{"ROLLBACK TO entry", &s.rollbackTo},
	} {
		st, err := b.w.PrepareContext(ctx, p.sql)
		if err != nil {
			_ = s.close()
			return fmt.Errorf("prepare ledger statements: %w", err)
		}
		*p.dst = st
	}
	b.ledger = s
	return nil
}

func (s *ledgerStmts) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, st := range []*sql.Stmt{s.get, s.getMany, s.put, s.putMany, s.epoch, s.mark, s.savepoint, s.release, s.rollbackTo} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// hasLedger reports whether the file has the ledger table (a file no
// batch was ever applied to has none).
func (b *Backend) hasLedger(ctx context.Context) (bool, error) {
	if b.ledgerSeen.Load() {
		return true, nil
	}
	var n int
	err := b.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'record_spool_batches'`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for the ledger: %w", err)
	}
	if n > 0 {
		b.ledgerSeen.Store(true)
	}
	return n > 0, nil
}

// BatchOutcome returns the ledger's result of the batch with id, exactly
// as AppendBatch returned it when it applied the batch; ErrNotFound when
// the batch was never applied (or its ledger row was swept). It reads
// through the reader pool, so it works read-only too.
func (b *Backend) BatchOutcome(ctx context.Context, id string) (_ recordstore.BatchResult, err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return recordstore.BatchResult{}, err
	}
	defer b.leave()
	ok, err := b.hasLedger(ctx)
	if err != nil {
		return recordstore.BatchResult{}, fmt.Errorf("batch outcome %s: %w", id, err)
	}
	if !ok {
		return recordstore.BatchResult{}, notFound("batch %s is not in the ledger", id)
	}
	st, err := b.rs.ledgerGetStmt(ctx, b.r)
	if err != nil {
		return recordstore.BatchResult{}, fmt.Errorf("batch outcome %s: %w", id, err)
	}
	res, found, err := ledgerGet(st.QueryRowContext(ctx, id), id)
	if err != nil {
		return recordstore.BatchResult{}, fmt.Errorf("batch outcome %s: %w", id, err)
	}
	if !found {
		return recordstore.BatchResult{}, notFound("batch %s is not in the ledger", id)
	}
	return res, nil
}

// ledgerGet decodes a ledger row read by sqlLedgerGet.
func ledgerGet(row *sql.Row, id string) (recordstore.BatchResult, bool, error) {
	var (
		outcome, results, at string
		epoch                int64
	)
	err := row.Scan(&outcome, &epoch, &results, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return recordstore.BatchResult{}, false, nil
	}
	if err != nil {
		return recordstore.BatchResult{}, false, fmt.Errorf("read ledger: %w", err)
	}
	res, err := decodeLedger(id, outcome, epoch, results, at)
	return res, err == nil, err
}

// decodeLedger turns the columns of a ledger row into the batch's result.
func decodeLedger(id, outcome string, epoch int64, results, at string) (recordstore.BatchResult, error) {
	var lr ledgerResults
	if err := json.Unmarshal([]byte(results), &lr); err != nil {
		return recordstore.BatchResult{}, corrupt("ledger row of batch %s: %v", id, err)
	}
	if lr.Entries == nil {
		lr.Entries = []recordstore.EntryResult{}
	}
	return recordstore.BatchResult{
		ID: id, Outcome: recordstore.BatchOutcome(outcome), Epoch: epoch, IngestedAt: parseStored(at),
		Entries: lr.Entries, Error: lr.Error,
	}, nil
}

// ledgerGetChunk is how many batch ids one lookup asks for.
const ledgerGetChunk = 32

// ledgerGetSQL is the lookup of n batch ids at once.
func ledgerGetSQL(n int) string {
	return `SELECT batch_id, outcome, epoch, results, ingested_at FROM record_spool_batches WHERE batch_id IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + `)`
}

// lookup returns the ledger's results of those of ids it holds: one id by
// itself, more ledgerGetChunk ids per query (the last chunk is padded by
// repeating an id).
func (s *ledgerStmts) lookup(ctx context.Context, ids []string) (map[string]recordstore.BatchResult, error) {
	out := map[string]recordstore.BatchResult{}
	if len(ids) == 1 {
		// One id, the common case of a lone append: an equality lookup,
		// not an IN list of 32 copies of it.
		res, found, err := ledgerGet(s.get.QueryRowContext(ctx, ids[0]), ids[0])
		if err != nil {
			return nil, fmt.Errorf("read ledger: %w", err)
		}
		if found {
			out[ids[0]] = res
		}
		return out, nil
	}
	args := make([]any, ledgerGetChunk)
	for len(ids) > 0 {
		n := min(len(ids), ledgerGetChunk)
		for i := range args {
			args[i] = ids[min(i, n-1)]
		}
		ids = ids[n:]
		if err := s.lookupChunk(ctx, args, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *ledgerStmts) lookupChunk(ctx context.Context, args []any, out map[string]recordstore.BatchResult) error {
	rows, err := s.getMany.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("read ledger: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, outcome, results, at string
			epoch                    int64
		)
		if err := rows.Scan(&id, &outcome, &epoch, &results, &at); err != nil {
			return fmt.Errorf("read ledger: %w", err)
		}
		res, err := decodeLedger(id, outcome, epoch, results, at)
		if err != nil {
			return err
		}
		out[id] = res
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read ledger: %w", err)
	}
	return nil
}

// ledgerRows are the ledger rows of a transaction, inserted together at
// its end (ledgerPutChunk rows per statement).
type ledgerRows []any

// ledgerWidth is the number of columns of a ledger row.
const ledgerWidth = 7

// ledgerPutChunk is how many ledger rows one INSERT writes.
const ledgerPutChunk = 32

// add appends the ledger row of res, the result of batch.
func (l *ledgerRows) add(batch *recordstore.Batch, res *recordstore.BatchResult) error {
	results, err := json.Marshal(ledgerResults{Entries: res.Entries, Error: res.Error})
	if err != nil {
		return fmt.Errorf("encode results of batch %s: %w", res.ID, err)
	}
	*l = append(*l, res.ID, batch.Producer.Instance, batch.Producer.Seq, res.Epoch, string(res.Outcome),
		string(results), recordstore.FormatDatetime(res.IngestedAt))
	return nil
}

// putTx inserts the rows inside tx.
func (l ledgerRows) putTx(ctx context.Context, tx *sql.Tx, s *ledgerStmts) error {
	for len(l) > 0 {
		st, n := s.put, 1
		if len(l) >= ledgerPutChunk*ledgerWidth {
			st, n = s.putMany, ledgerPutChunk
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, l[:n*ledgerWidth]...); err != nil {
			if isConstraintError(err) {
				err = fmt.Errorf("%w: %w", errLedgerConflict, err)
			}
			return fmt.Errorf("record batch %s in the ledger: %w", l[0], err)
		}
		l = l[n*ledgerWidth:]
	}
	return nil
}

// ledgerPutSQL is the INSERT of n ledger rows.
func ledgerPutSQL(n int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO record_spool_batches (batch_id, producer, producer_seq, epoch, outcome, results, ingested_at) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?)")
	}
	return sb.String()
}

// ProducerSeq returns the highest producer seq the ledger records for a
// producer instance, batches that failed included (0 when it has none).
// The owner applies each producer's batches in seq order from it.
func (b *Backend) ProducerSeq(ctx context.Context, instance string) (_ int64, err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return 0, err
	}
	defer b.leave()
	ok, err := b.hasLedger(ctx)
	if err != nil || !ok {
		return 0, err
	}
	var seq int64
	err = b.r.QueryRowContext(ctx, sqlProducerMark, instance).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("read producer %s in the ledger: %w", instance, err)
	}
	return seq, nil
}

// SweepBatches removes the ledger rows of batches ingested before the
// given time, in one transaction, and returns how many it removed. A
// swept batch applied again would be applied anew: sweep only batches
// whose spool folders are gone. A read-only backend refuses with
// ErrReadOnly. On error nothing was removed.
func (b *Backend) SweepBatches(ctx context.Context, before time.Time) (_ int64, err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return 0, err
	}
	defer b.leave()
	if b.readOnly {
		return 0, b.readOnlyErr("sweep batches")
	}
	ok, err := b.hasLedger(ctx)
	if err != nil || !ok {
		return 0, err
	}
	var n int64
	err = b.writeTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM record_spool_batches WHERE ingested_at < ?1`, recordstore.FormatDatetime(before))
		if err == nil {
			n, err = r.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep batches: %w", err)
	}
	return n, nil
}
