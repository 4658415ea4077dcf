// Committing a group and failing a batch: one transaction for many
// batches, the ledger's record of a batch that cannot be applied, the
// move to failed/, and the answer to their waiters.

package owner

import (
	"context"
	"errors"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// commitGroup applies a group in one transaction and answers its waiters;
// its folders stay in incoming/ until the next flush (appliedSet), those of
// batches a streamed bad row failed go to failed/. A group that holds
// inline batches is made durable (Sync) before they are answered
// (answerInline); when its transaction fails they are answered at once and
// the rest of the group is handled as ever (dropInline). A group whose
// transaction fails is retried one batch per transaction, so that only
// the batch at fault is failed (retryOrFail). It returns how many batches
// it applied or failed.
//
// On disk when it returns an error: nothing of the group is committed,
// and its batches are still in incoming/ — or, after a failed move to
// failed/, the ledger records the failure of a batch whose folder is
// still in incoming/ (a replay of it records nothing new).
func (s *Store[T]) commitGroup(ctx context.Context, group []loaded) (int, error) {
	batches := make([]recordstore.Batch, len(group))
	for i, g := range group {
		batches[i] = g.batch
	}
	if hasInline(group) {
		s.opts.Failpoint(FailInlineBeforeCommit)
	}
	if err := s.checkFence(); err != nil {
		if hasInline(group) {
			dropInline(group, err) // their callers get the error now
		}
		return 0, err
	}
	before := s.push.hub.commits.Load()
	results, err := s.backend.AppendBatch(ctx, batches...)
	commit := ownCommit(group, before, s.push.hub.commits.Load())
	if err != nil && hasInline(group) {
		if group = dropInline(group, err); len(group) == 0 {
			s.setLastError(err)
			return 0, err
		}
	}
	if err != nil {
		return s.groupFailed(ctx, group, err)
	}
	s.ing.single = false
	s.ing.unwritable = false
	s.opts.Metrics.groupCommit(len(group))
	var bad map[int]bool // batches whose streamed rows failed them
	for i, res := range results {
		g := group[i]
		s.raiseHighWater(g.name.Instance, g.name.Seq)
		if g.inline != nil {
			// No folder: nothing to move. The ledger has its outcome.
			if res.Outcome != recordstore.OutcomeFailed {
				s.opts.Metrics.ingested(appendedRows(res), time.Since(g.name.Created))
				s.noteRefused(g.name, res)
			}
			s.announce(res)
			continue
		}
		s.ing.done(g.name.String())
		if res.Outcome == recordstore.OutcomeFailed {
			if bad == nil {
				bad = map[int]bool{}
			}
			bad[i] = true
			continue // announced once in failed/
		}
		s.applied.add(g.name)
		s.opts.Metrics.ingested(appendedRows(res), time.Since(g.name.Created))
		s.noteRefused(g.name, res)
		s.announce(res)
	}
	if hasInline(group) {
		s.answerInline(ctx, group, results, commit)
		s.opts.Failpoint(FailInlineAfterAnswer)
	}
	s.opts.Failpoint(FailAfterLedger)
	for i, g := range group {
		if bad[i] {
			if err := s.moveFailed(ctx, g.name, results[i].Error, results); err != nil {
				return len(group), err
			}
		}
	}
	return len(group), nil
}

// groupFailed handles the failed transaction of group (err): a group of
// many is tried again one batch per transaction, each of its batches
// charged one transient failure; a batch that failed alone is held for a
// retry or failed (retryOrFail). It returns 1 when it failed the batch.
func (s *Store[T]) groupFailed(ctx context.Context, group []loaded, err error) (int, error) {
	s.setLastError(err)
	if ctx.Err() != nil || errors.Is(err, recordstore.ErrClosed) || s.fatal() != nil {
		return 0, err
	}
	s.ing.single = len(group) > 1
	if s.ing.single {
		now := time.Now()
		for _, g := range group {
			s.ing.transient(g.name.String(), now)
			s.opts.Metrics.retried()
		}
		return 0, err
	}
	failed, ferr := s.retryOrFail(ctx, group[0].name, err)
	switch {
	case ferr != nil:
		return 0, errors.Join(err, ferr)
	case failed:
		return 1, nil
	}
	return 0, retryHeld{err}
}

// failBatch records a batch that cannot be applied as failed in the ledger
// (so waiters fail at once and its producer's successors are not held
// back), then moves it to failed/ with error.json.
//
// On disk when it returns an error: the batch is still in incoming/, and
// the ledger may record its failure (see moveFailed).
func (s *Store[T]) failBatch(ctx context.Context, n spool.BatchName, cause error) error {
	key := n.String()
	b := recordstore.Batch{ID: n.ID, Created: n.Created,
		Producer: recordstore.Producer{Instance: n.Instance, Seq: n.Seq},
		Failure:  recordstore.AsBatchError(cause)}
	// A batch put back after a failure that fails again replaces the
	// ledger's record of the first failure; unmarked, the first record
	// stands (this is then a replay of a failure already recorded).
	if marked, err := s.spool.RetryMarked(ctx, spool.StateIncoming, key); err == nil {
		b.Retry = marked
	}
	if err := s.checkFence(); err != nil {
		return err
	}
	results, err := s.backend.AppendBatch(ctx, b)
	if err != nil {
		s.setLastError(err)
		return err
	}
	s.ing.unwritable = false
	s.ing.done(key)
	s.raiseHighWater(n.Instance, n.Seq)
	return s.moveFailed(ctx, n, cause, results)
}

// moveFailed moves a batch the ledger records as failed to failed/ with
// error.json, counts it and answers its waiters (results holds its result).
func (s *Store[T]) moveFailed(ctx context.Context, n spool.BatchName, cause error, results []recordstore.BatchResult) error {
	key := n.String()
	if err := s.spool.MoveToFailed(ctx, key, cause); err != nil {
		s.setLastError(err)
		return err
	}
	attrs := []any{"batch", key}
	var gaveUp *gaveUpError
	if errors.As(cause, &gaveUp) {
		attrs = append(attrs, "attempt", gaveUp.attempts)
	}
	s.log.Warn("batch failed", append(attrs, "code", recordstore.Code(cause), "error", cause)...)
	s.opts.Metrics.failed()
	s.mu.Lock()
	s.mu.failed++
	s.mu.lastErr = key + ": " + cause.Error()
	s.mu.Unlock()
	for _, res := range results {
		if res.ID == n.ID {
			s.announce(res)
		}
	}
	return nil
}

// noteRefused logs a warning for each entry a committed batch refused (the
// batch is moved to trash/ like any other; the ledger keeps the entry's
// error, which query spool ls --refused lists) and counts it in
// Status.Refused, so that a producer that does not wait for the outcome
// can still learn of it.
func (s *Store[T]) noteRefused(n spool.BatchName, res recordstore.BatchResult) {
	refused := 0
	for i, e := range res.Entries {
		if e.Error == nil {
			continue
		}
		refused++
		s.log.Warn("entry refused", "batch", n.String(), "producer", n.Instance, "entry", i,
			"op", string(e.Op), "stream", e.Stream, "code", e.Error.Code, "error", e.Error.Message)
	}
	if refused == 0 {
		return
	}
	s.mu.Lock()
	s.mu.refused += refused
	s.mu.Unlock()
}

// announce answers the waiters of a batch and reports it.
func (s *Store[T]) announce(res recordstore.BatchResult) {
	s.waiters.resolve(res)
	if s.opts.Events.Batch != nil {
		s.opts.Events.Batch(res)
	}
}

// moveStrays moves entries of incoming/ that are not batch names to
// failed/, so they are seen rather than silently ignored.
func (s *Store[T]) moveStrays(ctx context.Context) {
	strays, err := s.spool.Strays(ctx, spool.StateIncoming)
	if err != nil {
		return
	}
	for _, name := range strays {
		if err := s.spool.MoveToFailed(ctx, name, errors.New("not a batch name")); err != nil {
			s.log.Warn("move stray", "entry", name, "error", err)
			continue
		}
		s.log.Warn("moved an entry of incoming/ that is not a batch to failed/", "entry", name)
	}
}

// appendedRows is the number of rows the appends of a committed batch
// added.
func appendedRows(res recordstore.BatchResult) int {
	n := 0
	for _, e := range res.Entries {
		if e.Append != nil {
			n += int(e.Append.Appended)
		}
	}
	return n
}
