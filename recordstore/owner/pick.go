// Picking the next group: the batches of incoming/ that may be applied
// now, in order, their manifests read and their rows decoded.

package owner

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// Group commit bounds: how many batches and rows one transaction takes.
const (
	groupBatches = 256
	groupRows    = 200_000
)

// pickedBatch is a batch chosen for the next group, its manifest read.
type pickedBatch struct {
	name  spool.BatchName
	batch *spool.Folder
}

// pickGroup loads the next batches to apply, in order, failing those that
// can never load (retryOrFail). The count it returns is of batches
// failed. Batches are chosen and their manifests read one by one, in
// order; their rows are then decoded concurrently (decoding is the costly
// part), and the results are taken in order again.
func (s *Store[T]) pickGroup(ctx context.Context, names []spool.BatchName, applied map[string]bool) ([]loaded, int, error) {
	picked, failed, err := s.pickBatches(ctx, names, applied)
	if err != nil {
		return nil, failed, err
	}
	decoded := s.decodeAll(ctx, picked)
	var group []loaded
	blocked := map[string]bool{} // producers whose earlier batch must be retried first
	for i, p := range picked {
		if blocked[p.name.Instance] {
			closeLoaded([]loaded{decoded[i].l})
			continue
		}
		if decoded[i].err == nil {
			group = append(group, decoded[i].l)
			continue
		}
		if ctx.Err() != nil {
			for _, d := range decoded[i+1:] {
				closeLoaded([]loaded{d.l})
			}
			return group, failed, ctx.Err()
		}
		gone, err := s.retryOrFail(ctx, p.name, decoded[i].err)
		if err != nil {
			return group, failed, err
		}
		if !gone {
			blocked[p.name.Instance] = true
			continue
		}
		failed++
	}
	return group, failed, nil
}

// pickBatches chooses, in order, the batches of the next group and reads
// their manifests, up to groupBatches batches or groupRows rows.
func (s *Store[T]) pickBatches(ctx context.Context, names []spool.BatchName, applied map[string]bool) ([]pickedBatch, int, error) {
	var picked []pickedBatch
	rows, failed := int64(0), 0
	taken := map[string]int64{} // producer → seq taken into this group
	limit := groupBatches
	if s.ing.single {
		limit = 1
	}
	var failedNames map[string]bool // lazily listed
	for _, n := range names {
		if len(picked) >= limit || rows >= groupRows {
			break
		}
		if applied[n.ID] {
			// Committed by this owner; it leaves incoming/ at the next
			// flush (see appliedSet).
			taken[n.Instance] = n.Seq
			continue
		}
		key := n.String()
		if !s.ing.due(key, time.Now()) || !s.inOrder(ctx, n, taken, &failedNames) {
			continue
		}
		b, err := s.spool.Load(ctx, spool.StateIncoming, key)
		if err == nil {
			picked = append(picked, pickedBatch{name: n, batch: b})
			taken[n.Instance] = n.Seq
			for _, e := range b.Manifest.Entries {
				rows += e.Rows
			}
			continue
		}
		if ctx.Err() != nil {
			// The drain was cancelled (the owner is closing), not the
			// batch at fault: recording a transient failure would hold it
			// back from the final drain by the retry backoff.
			return picked, failed, ctx.Err()
		}
		gone, err := s.retryOrFail(ctx, n, err)
		if err != nil {
			return picked, failed, err
		}
		if gone {
			taken[n.Instance] = n.Seq
			failed++
		}
	}
	return picked, failed, nil
}
