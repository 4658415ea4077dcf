// Per-producer order: a producer's batches are applied in the order of
// their seqs, a batch whose predecessor is missing waiting up to GapWait,
// unless that predecessor is in failed/.

package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// inOrder reports whether n may be applied now: its producer is new to the
// ledger, or n is the next seq after the producer's high-water mark, or the
// gap before it was waited out (GapWait) or its predecessor is in failed/.
// When the ledger cannot tell the producer's high-water mark, n is held
// (false) and tried again at a later drain: applying it could put it
// before a predecessor the ledger does not yet hold.
func (s *Store[T]) inOrder(ctx context.Context, n spool.BatchName, taken map[string]int64, failedNames *map[string]bool) bool {
	prev, ok := taken[n.Instance]
	if !ok {
		hw, err := s.highWater(ctx, n.Instance)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("batch held: the ledger cannot tell its producer's last seq", "batch", n.String(), "error", err)
				s.setLastError(err)
			}
			return false
		}
		prev = hw
	}
	key := n.String()
	if prev == 0 || n.Seq <= prev+1 {
		delete(s.ing.gapSince, key)
		return true
	}
	first, ok := s.ing.gapSince[key]
	if !ok {
		first = time.Now()
		s.ing.gapSince[key] = first
	}
	if time.Since(first) >= s.opts.GapWait {
		s.log.Error("producer gap waited out; applying out of order", "batch", key, "after_seq", prev)
		return true
	}
	if *failedNames == nil {
		*failedNames = map[string]bool{}
		if fl, err := s.spool.List(ctx, spool.StateFailed); err == nil {
			for _, f := range fl {
				(*failedNames)[f.Instance+"/"+itoa(f.Seq)] = true
			}
		}
	}
	return (*failedNames)[n.Instance+"/"+itoa(n.Seq-1)]
}

// highWater returns the producer's highest seq in the ledger (cached once
// read). A failed read is not cached: the next call reads again.
func (s *Store[T]) highWater(ctx context.Context, instance string) (int64, error) {
	if hw, ok := s.ing.hw[instance]; ok {
		return hw, nil
	}
	hw, err := s.backend.ProducerSeq(ctx, instance)
	if err != nil {
		return 0, fmt.Errorf("read the ledger's last seq of producer %s: %w", instance, err)
	}
	s.ing.hw[instance] = hw
	return hw, nil
}

// raiseHighWater records that the ledger now holds seq of instance.
func (s *Store[T]) raiseHighWater(instance string, seq int64) {
	if seq > s.ing.hw[instance] {
		s.ing.hw[instance] = seq
	}
}
