// Submitting a mutation through a store's owner: the one piece that hands
// a batch to a submit function and unpacks the owner's result, shared by
// every backend and store handle of a process that does not own the store.

package recordstore

import (
	"context"
	"fmt"
)

// SubmitFunc applies a batch through the process that owns the store and
// returns the ledger's result for it. The submitter fills the batch's ID,
// Producer and Created.
type SubmitFunc func(ctx context.Context, b Batch) (BatchResult, error)

// SubmitBatch hands batch to submit and unpacks the owner's result, so
// that every non-owner write path answers the same way:
//
//   - an error of submit itself (the owner could not be reached, or ctx
//     ended first: the owner package's *PendingError) is returned
//     unchanged, with an empty result;
//   - an error the owner recorded for the batch is returned wrapped with
//     what ("what: code: message"), errors.Is finding its sentinel;
//   - a result with another number of entry results than batch has
//     entries is an error naming the batch;
//   - an error the owner recorded for an entry (the first refused one) is
//     returned wrapped with what.
//
// The result is returned in every case but the first, so that a caller can
// name the batch (BatchResult.ID). SubmitBatch itself
// writes nothing: what is on disk is what submit left.
func SubmitBatch(ctx context.Context, submit SubmitFunc, what string, batch Batch) (BatchResult, error) {
	res, err := submit(ctx, batch)
	if err != nil {
		return BatchResult{}, err
	}
	if res.Error != nil {
		return res, fmt.Errorf("%s: %w", what, res.Error)
	}
	if len(res.Entries) != len(batch.Entries) {
		return res, fmt.Errorf("%s: batch %s has %d entry results, want %d", what, res.ID, len(res.Entries), len(batch.Entries))
	}
	for _, r := range res.Entries {
		if r.Error != nil {
			return res, fmt.Errorf("%s: %w", what, r.Error)
		}
	}
	return res, nil
}
