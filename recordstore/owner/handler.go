// The owner's answers to control requests.

package owner

import (
	"context"
	"errors"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// controlStatus reports the owner's live state. Backlog is counted now:
// the batches of incoming/ this owner has not applied (the last drain's
// count when incoming/ cannot be listed); so is the damage its backend
// met.
func (s *Store[T]) controlStatus(ctx context.Context) Status {
	backlog, err := s.countBacklog(ctx)
	s.mu.Lock()
	st := s.mu.state
	if err != nil {
		backlog = s.mu.backlog
	}
	st.Backlog, st.Failed, st.Refused, st.LastError = backlog, s.mu.failed, s.mu.refused, s.mu.lastErr
	role := s.mu.role
	s.mu.Unlock()
	st.Corrupt = damageOf(s.backend)
	return Status{State: st, Role: role, SocketAlive: true,
		HeartbeatAgeMS: time.Since(st.HeartbeatAt).Milliseconds(), Replica: s.replicaStatus(), Lease: s.fenceStatus(),
		Wake: WakePush, Subscribers: s.push.hub.subs.Load()}
}

// countBacklog counts the batches of incoming/ that this owner has not
// applied.
func (s *Store[T]) countBacklog(ctx context.Context) (int, error) {
	applied := s.applied.snapshot() // before the listing, as a drain does
	names, err := s.spool.List(ctx, spool.StateIncoming)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if !applied[name.ID] {
			n++
		}
	}
	return n, nil
}

// controlIngest wakes the ingest loop for ids and, with wait, answers with
// each batch's outcome as soon as it is in the ledger (or not done when the
// request's deadline comes first). With wait, and no drain running, it
// drains on its own goroutine (drainNow) instead of handing the work to
// the ingest loop.
//
// While incoming/ is watched (startWatch) the batches' arrival has started
// a drain already, or is about to: the request wakes nothing. A waiting
// request drains itself when no drain runs, else waits for the running
// drain to end (awaitDrain), and reads the ledger only for what that
// drain did not answer. When it waited for another drain and its batches
// are still not done, it drains once itself (if no drain runs), so that a
// watch that misses an arrival (incoming/ replaced under it, say) costs
// nothing but that drain.
func (s *Store[T]) controlIngest(ctx context.Context, ids []string, wait bool) []IngestOutcome {
	// A producer says it published: the next drain lists incoming/ even
	// if the watch saw nothing (see spoolQuiet), so that a watch that
	// missed the arrival costs one drain, as ever.
	s.arrivals.Add(1)
	out := make([]IngestOutcome, len(ids))
	chans := make([]<-chan recordstore.BatchResult, len(ids))
	for i, id := range ids {
		out[i].ID = id
		if wait && spool.ValidID(id) {
			ch, cancel := s.waiters.add(id)
			defer cancel()
			chans[i] = ch
		}
	}
	// A batch applied from now on is answered through its waiter,
	// registered above; one applied already (by this owner or an earlier
	// one) from the ledger.
	watching := s.watching.Load()
	drained := false // by this request, in awaitDrain
	switch {
	case !wait:
		if !watching {
			s.wake()
		}
		s.collectDone(ctx, ids, chans, out)
		return out
	case watching:
		drained = s.awaitDrain(ctx, chans, out)
	default:
		s.drainNow()
	}
	if !s.collectDone(ctx, ids, chans, out) && watching && !drained {
		s.drainIfIdle()
	}
	for i := range out {
		if out[i].Done || chans[i] == nil {
			continue
		}
		if !s.waitOne(ctx, ids[i], chans[i], &out[i]) {
			return out
		}
	}
	return out
}

// unknownCheck is how long a wait request waits for a batch before it
// looks whether the owner knows it at all, and then again each time.
const unknownCheck = time.Second

// waitOne waits for the outcome of batch id on ch into out. A batch that
// takes longer than unknownCheck is looked up (lookup) every unknownCheck:
// one that neither the ledger nor the spool holds is marked Unknown, so
// that a waiter that cannot read the ledger itself (a detached process) is
// told rather than kept waiting for a batch that will never come (a batch
// is published before its producer asks for it, and stays in incoming/,
// failed/ or the ledger from then on); one refused long ago whose ledger
// row was swept is answered from its error.json. It reports false when
// ctx ended first.
func (s *Store[T]) waitOne(ctx context.Context, id string, ch <-chan recordstore.BatchResult, out *IngestOutcome) bool {
	t := time.NewTimer(unknownCheck)
	defer t.Stop()
	for {
		select {
		case res := <-ch:
			out.Done, out.Result = true, &res
			return true
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		res, pending, err := s.lookup(ctx, id)
		switch {
		case errors.Is(err, recordstore.ErrNotFound):
			out.Unknown = true
			return true
		case err == nil && !pending:
			out.Done, out.Result = true, &res
			return true
		}
		t.Reset(unknownCheck)
	}
}

// awaitDrain returns at once when every waiter is answered already (see
// waiters.recent). Otherwise it drains on the caller's goroutine when no
// drain runs (and reports that it did), or else waits, filling out from
// chans, until every waiter is answered, the running drain ends, or ctx
// does.
func (s *Store[T]) awaitDrain(ctx context.Context, chans []<-chan recordstore.BatchResult, out []IngestOutcome) (drained bool) {
	if answered(chans) {
		return false // applied already: the waiters have the outcomes
	}
	ended := s.drain.end()
	if s.Role() != RoleOwner {
		return false
	}
	if s.drainIfIdle() {
		return true
	}
	for i, ch := range chans {
		if ch == nil {
			continue
		}
		select {
		case res := <-ch:
			out[i].Done, out[i].Result = true, &res
		case <-ended:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return false
}

// answered reports whether every waiter's channel holds its outcome.
func answered(chans []<-chan recordstore.BatchResult) bool {
	for _, ch := range chans {
		if ch != nil && len(ch) == 0 {
			return false
		}
	}
	return true
}

// collectDone marks done the outcomes of ids answered through their
// waiters or found in the ledger, and reports whether every valid id is
// done.
func (s *Store[T]) collectDone(ctx context.Context, ids []string, chans []<-chan recordstore.BatchResult, out []IngestOutcome) bool {
	all := true
	for i, id := range ids {
		if out[i].Done || !spool.ValidID(id) {
			continue
		}
		if chans[i] != nil {
			select {
			case res := <-chans[i]:
				out[i].Done, out[i].Result = true, &res
				continue
			default:
			}
		}
		if res, ok, _ := s.ledger(ctx, id); ok {
			out[i].Done, out[i].Result = true, &res
			continue
		}
		all = false
	}
	return all
}

// controlSpool lists incoming and failed batches.
func (s *Store[T]) controlSpool(ctx context.Context) (SpoolListing, error) {
	var l SpoolListing
	applied := s.applied.snapshot() // before the listing, as a drain does
	for _, part := range []struct {
		state spool.State
		dst   *[]BatchRef
	}{{spool.StateIncoming, &l.Incoming}, {spool.StateFailed, &l.Failed}} {
		names, err := s.spool.List(ctx, part.state)
		if err != nil {
			return l, err
		}
		*part.dst = make([]BatchRef, 0, len(names))
		for _, n := range names {
			*part.dst = append(*part.dst, BatchRef{Batch: n.String(), Producer: n.Instance, Seq: n.Seq, Created: n.Created,
				Applied: part.state == spool.StateIncoming && applied[n.ID]})
		}
	}
	return l, nil
}
