// Failing a whole batch inside a group transaction: a batch whose entries
// stream their rows (recordstore.RowSource) learns that its data is bad
// only while it is being applied, and then none of it may stay.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// batchUndo is the savepoint around one batch whose entries read row
// sources, and the stream cache's state of the batch's streams before it.
type batchUndo struct {
	snaps []streamSnap
}

type streamSnap struct {
	id string
	cs cachedStream
	ok bool
}

// hasSource reports whether an entry of b streams its rows.
func hasSource(b *recordstore.Batch) bool {
	for i := range b.Entries {
		if b.Entries[i].Source != nil {
			return true
		}
	}
	return false
}

// beginBatchUndo opens the batch savepoint (nested around the entries'
// own) and remembers the cached state of every stream the batch names.
func beginBatchUndo(ctx context.Context, tx *sql.Tx, cache *streamCache, p *batchPlan) (*batchUndo, error) {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT batch"); err != nil {
		return nil, fmt.Errorf("batch savepoint: %w", err)
	}
	u := &batchUndo{}
	seen := map[string]bool{}
	for i := range p.entries {
		id := p.entries[i].e.Stream
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		cs, ok := cache.snapshot(id)
		u.snaps = append(u.snaps, streamSnap{id: id, cs: cs, ok: ok})
	}
	return u, nil
}

// release keeps what the batch did. A nil undo has nothing to release.
func (u *batchUndo) release(ctx context.Context, tx *sql.Tx) error {
	if u == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "RELEASE batch"); err != nil {
		return fmt.Errorf("release batch savepoint: %w", err)
	}
	return nil
}

// fail rolls the batch back, in the file and in the cache, and turns res
// into the batch's failure: outcome failed, the source's error, no entry
// results — what a batch submitted with Failure records.
func (u *batchUndo) fail(ctx context.Context, tx *sql.Tx, cache *streamCache, res recordstore.BatchResult, se *sourceError) (recordstore.BatchResult, error) {
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO batch"); err != nil {
		return res, fmt.Errorf("roll back to batch savepoint: %w", err)
	}
	if err := u.release(ctx, tx); err != nil {
		return res, err
	}
	for _, s := range u.snaps {
		cache.restore(s.id, s.cs, s.ok)
	}
	res.Outcome = recordstore.OutcomeFailed
	res.Error = recordstore.AsBatchError(se.err)
	res.Entries = []recordstore.EntryResult{}
	return res, nil
}
