// The fast path of a non-owner's write, owner side: the control socket's
// append action. A producer sends a small batch (spool.EncodeInline) over
// the socket; the owner checks it, commits it in its next group commit
// with whatever else waits, makes that commit durable (the backend's Sync:
// one fsync shared by every batch of the group) and only then answers
// with the ledger's result. Nothing of the batch is on disk before that
// commit; the ledger records its id as for a spooled batch, so that a
// producer that gets no answer and publishes the same batch (same id) to
// the spool never has it applied twice.

package owner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// ActionAppend is the control action of the fast path: Request.Batch holds
// one inline batch (spool.EncodeInline), and the answer's Results hold its
// one outcome, Done with the ledger's result once the batch is committed
// and durable. An answer with an error means the owner did not commit the
// batch — except when the connection breaks or times out, after which the
// batch may or may not be committed: the producer then asks the ledger,
// and publishes the same batch to the spool when it is not there. An owner
// that predates the action answers "unknown action", and the producer
// uses the spool.
const ActionAppend = "append"

// The failpoints of the fast path (Options.Failpoint), in order: the
// owner's, around the group commit that holds an inline batch, then the
// producer's, once its request is sent.
const (
	FailInlineBeforeCommit = "inline-before-commit" // the owner took the batch into a group, nothing committed
	FailInlineAfterCommit  = "inline-after-commit"  // committed and synced, the producer not answered
	FailInlineAfterAnswer  = "inline-after-answer"  // the producer answered
	FailInlineAfterSend    = "inline-after-send"    // producer: request sent, answer not read
)

// Reasons an owner gives for not committing an inline batch (the answer's
// error text starts with one). Either way the producer publishes the batch
// to the spool.
var (
	// errInlineNotOwner: this process does not own the store (any more).
	errInlineNotOwner = errors.New("not the owner")
	// errInlineSpoolFirst: the producer has an earlier batch waiting in
	// incoming/ that this group does not take; applying the inline one
	// first would break the producer's order.
	errInlineSpoolFirst = errors.New("an earlier batch of the producer waits in the spool")
	// errInlineNotCommitted: the group that held the batch failed.
	errInlineNotCommitted = errors.New("not committed")
)

// inlineReq is one inline batch waiting for a group commit.
type inlineReq struct {
	name  spool.BatchName
	batch recordstore.Batch
	done  chan inlineAnswer // buffered: the drain never blocks on it
	// dropped is set when the request gave up waiting (its deadline, the
	// owner closing) before a drain took the batch: the drain then leaves
	// it, and the producer uses the spool.
	dropped atomic.Bool
	// taken is set when a drain took the batch into a group.
	taken atomic.Bool
}

// inlineAnswer is the drain's answer to an inline request: the batch's
// result, or why it was not committed; commit is the notice count of the
// commit that held it when that commit held nothing else (ownCommit).
type inlineAnswer struct {
	res    recordstore.BatchResult
	err    error
	commit uint64
}

// answer hands the request its answer (once).
func (r *inlineReq) answer(res recordstore.BatchResult, err error) {
	r.answerCommit(res, err, 0)
}

// answerCommit is answer with the batch's own commit's notice count.
func (r *inlineReq) answerCommit(res recordstore.BatchResult, err error, commit uint64) {
	select {
	case r.done <- inlineAnswer{res, err, commit}:
	default:
	}
}

// ownCommit returns the notice count of the commit of group, a group of
// one inline batch of appends only, when the count moved by exactly one
// across its AppendBatch (before and after): then that commit was the
// batch's own, and its producer — which wakes its own followers of the
// batch's streams when answered — need not probe the file for the notice
// that announces it (see noticeFilter). Otherwise 0: another writer of
// this process committed in between, or the commit held other batches, a
// declaration (a catalog change the producer's change feed must read) or
// another operation.
func ownCommit(group []loaded, before, after uint64) uint64 {
	if len(group) != 1 || group[0].inline == nil || after != before+1 || !appendsOnly(&group[0].batch) {
		return 0
	}
	return after
}

// inlineQueue holds the inline batches no drain has taken yet.
type inlineQueue struct {
	mu sync.Mutex
	q  []*inlineReq
}

func (q *inlineQueue) push(r *inlineReq) {
	q.mu.Lock()
	q.q = append(q.q, r)
	q.mu.Unlock()
}

// take removes and returns up to n requests that did not give up, oldest
// first, marking them taken.
func (q *inlineQueue) take(n int) []*inlineReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*inlineReq
	i := 0
	for ; i < len(q.q) && len(out) < n; i++ {
		r := q.q[i]
		if r.dropped.Load() {
			continue
		}
		r.taken.Store(true)
		out = append(out, r)
	}
	q.q = append(q.q[:0], q.q[i:]...)
	return out
}

// pending reports whether requests wait.
func (q *inlineQueue) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.q) > 0
}

// inlineOffText starts the answer of an owner that does not take the
// append action (the builds that sent replicated stores' batches through
// the spool); the producer remembers it for that socket, as it remembers
// an owner that predates the action.
const inlineOffText = "fast path off"

// appendHandler is what the append action asks of the owner.
type appendHandler interface {
	controlAppend(ctx context.Context, data []byte) (IngestOutcome, error)
}

// serveAppend answers the append action.
func (s *controlServer) serveAppend(ctx context.Context, req Request, resp *Response) {
	h, ok := s.h.(appendHandler)
	if !ok {
		resp.Error = fmt.Sprintf("unknown action %q", req.Action)
		return
	}
	out, err := h.controlAppend(ctx, req.Batch)
	if err != nil {
		resp.Error = err.Error()
		return
	}
	resp.Results, resp.OK = []IngestOutcome{out}, true
}

// controlAppend decodes an inline batch, queues it for the next group
// commit (draining at once on this goroutine when no drain runs), and
// waits for its answer until ctx ends. An error means the batch was not
// committed, except after ctx ended with the batch taken into a group (the
// answer then says so, and the producer asks the ledger).
func (s *Store[T]) controlAppend(ctx context.Context, data []byte) (IngestOutcome, error) {
	if s.Role() != RoleOwner {
		return IngestOutcome{}, errInlineNotOwner
	}
	if err := s.fatal(); err != nil {
		return IngestOutcome{}, fmt.Errorf("%w: the writer stopped: %w", errInlineNotCommitted, err)
	}
	b, err := spool.DecodeInline(ctx, data, s.spool.Limits())
	if err != nil {
		return IngestOutcome{}, fmt.Errorf("refused: %w", err)
	}
	r := &inlineReq{batch: *b, done: make(chan inlineAnswer, 1),
		name: spool.BatchName{Created: b.Created, Instance: b.Producer.Instance, Seq: b.Producer.Seq, ID: b.ID}}
	s.inline.push(r)
	s.drainNow()
	select {
	case a := <-r.done:
		if a.err != nil {
			return IngestOutcome{}, a.err
		}
		out := IngestOutcome{ID: b.ID, Done: true, Result: &a.res}
		if a.commit != 0 {
			out.Commit, out.Epoch = a.commit, s.backend.Epoch()
		}
		return out, nil
	case <-ctx.Done():
		r.dropped.Store(true)
		if r.taken.Load() {
			return IngestOutcome{}, fmt.Errorf("batch %s: no answer in time; it may be committed: ask the ledger", b.ID)
		}
		return IngestOutcome{}, fmt.Errorf("%w: batch %s waited too long", errInlineNotCommitted, b.ID)
	}
}

// addInline appends to group the inline batches waiting, up to the group
// bounds (one in all while the ingest applies one batch per transaction).
// An inline batch whose producer has an earlier batch in incoming/ that
// neither this group nor an earlier commit took is answered
// errInlineSpoolFirst: the producer then spools it, behind that one.
func (s *Store[T]) addInline(group []loaded, names []spool.BatchName, applied map[string]bool) []loaded {
	limit := groupBatches - len(group)
	if s.ing.single {
		limit = 1 - len(group)
	}
	if limit <= 0 {
		return group
	}
	reqs := s.inline.take(limit)
	if len(reqs) == 0 {
		return group
	}
	inGroup := make(map[string]bool, len(group))
	for _, g := range group {
		inGroup[g.name.ID] = true
	}
	waiting := map[string]int64{} // producer → its lowest seq left in incoming/
	for _, n := range names {
		if applied[n.ID] || inGroup[n.ID] {
			continue
		}
		if seq, ok := waiting[n.Instance]; !ok || n.Seq < seq {
			waiting[n.Instance] = n.Seq
		}
	}
	for _, r := range reqs {
		if seq, ok := waiting[r.name.Instance]; ok && seq < r.name.Seq {
			r.answer(recordstore.BatchResult{}, errInlineSpoolFirst)
			continue
		}
		group = append(group, loaded{name: r.name, batch: r.batch, inline: r})
	}
	return group
}

// hasInline reports whether group holds an inline batch.
func hasInline(group []loaded) bool {
	for _, g := range group {
		if g.inline != nil {
			return true
		}
	}
	return false
}

// dropInline answers the inline batches of a group whose transaction
// failed (err: none of them is committed) and returns the group without
// them: the producers publish theirs to the spool, where a batch at fault
// is retried and failed as any spooled batch is.
func dropInline(group []loaded, err error) []loaded {
	out := group[:0:0]
	for _, g := range group {
		if g.inline != nil {
			g.inline.answer(recordstore.BatchResult{}, fmt.Errorf("%w: %w", errInlineNotCommitted, err))
			continue
		}
		out = append(out, g)
	}
	return out
}

// answerInline makes the group's commit durable (the backend's Sync) and
// answers its inline batches with their results. When the Sync fails the
// writer stops (setLastError), and the batches are answered with the
// error: their commit may not survive a power loss (the producer asks the
// ledger, which has them, and gets their result from it).
func (s *Store[T]) answerInline(ctx context.Context, group []loaded, results []recordstore.BatchResult, commit uint64) {
	err := s.backend.Sync(ctx)
	if err != nil {
		s.setLastError(err)
	} else {
		s.opts.Failpoint(FailInlineAfterCommit)
	}
	for i, g := range group {
		if g.inline == nil {
			continue
		}
		if err != nil {
			g.inline.answer(recordstore.BatchResult{}, fmt.Errorf("batch %s is committed but not durable: %w", g.name.ID, err))
			continue
		}
		g.inline.answerCommit(results[i], nil, commit)
	}
}
