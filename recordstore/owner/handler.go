// The owner's answers to control requests.

package owner

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// controlStatus reports the owner's live state.
func (s *Store[T]) controlStatus(context.Context) Status {
	s.mu.Lock()
	st := s.mu.state
	st.Backlog, st.Failed, st.LastError = s.mu.backlog, s.mu.failed, s.mu.lastErr
	role := s.mu.role
	s.mu.Unlock()
	return Status{State: st, Role: role, SocketAlive: true,
		HeartbeatAgeMS: time.Since(st.HeartbeatAt).Milliseconds()}
}

// controlIngest wakes the ingest loop for ids and, with wait, answers with
// each batch's outcome as soon as it is in the ledger (or not done when the
// request's deadline comes first). With wait, and no drain running, it
// drains on its own goroutine (drainNow) instead of handing the work to
// the ingest loop.
func (s *Store[T]) controlIngest(ctx context.Context, ids []string, wait bool) []IngestOutcome {
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
	if wait {
		s.drainNow()
	} else {
		s.wake()
	}
	for i, id := range ids {
		if !spool.ValidID(id) {
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
		}
	}
	if !wait {
		return out
	}
	for i := range out {
		if out[i].Done || chans[i] == nil {
			continue
		}
		select {
		case res := <-chans[i]:
			out[i].Done, out[i].Result = true, &res
		case <-ctx.Done():
			return out
		}
	}
	return out
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
