// The ledger's refused entries: entries of committed spool batches that
// were rolled back alone (a sealed stream, a conflicting schema), listed
// for `query spool ls --refused`.

package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// RefusedEntry is one refused entry of a committed batch, as the ledger
// records it.
type RefusedEntry struct {
	// Batch is the batch id; Producer and Seq its producer instance and seq.
	Batch    string
	Producer string
	Seq      int64
	// Entry is the entry's index in the batch, from 0; Op and Stream are
	// its operation and stream.
	Entry  int
	Op     recordstore.BatchOp
	Stream string
	// Error is the entry's recorded error (its Code and Message).
	Error recordstore.BatchError
	// IngestedAt is when the batch was committed.
	IngestedAt time.Time
}

// sqlLedgerRefused reads the committed batches whose results carry an
// entry error, oldest first. The LIKE is a cheap filter; the JSON decides.
const sqlLedgerRefused = `SELECT batch_id, producer, producer_seq, outcome, epoch, results, ingested_at
	FROM record_spool_batches WHERE outcome = 'committed' AND results LIKE '%"error":%'
	ORDER BY ingested_at, producer, producer_seq`

// RefusedEntries lists the refused entries of the committed batches the
// ledger still holds (rows older than the owner's ledger retention are
// swept), oldest batch first, entries in batch order. It reads through
// the reader pool, so it works read-only too; a file without a ledger has
// none.
func (b *Backend) RefusedEntries(ctx context.Context) (_ []RefusedEntry, err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	ok, err := b.hasLedger(ctx)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := b.r.QueryContext(ctx, sqlLedgerRefused)
	if err != nil {
		return nil, fmt.Errorf("list refused entries: %w", err)
	}
	defer rows.Close()
	var out []RefusedEntry
	for rows.Next() {
		var (
			id, producer, outcome, results, at string
			seq, epoch                         int64
		)
		if err := rows.Scan(&id, &producer, &seq, &outcome, &epoch, &results, &at); err != nil {
			return nil, fmt.Errorf("list refused entries: %w", err)
		}
		res, err := decodeLedger(id, outcome, epoch, results, at)
		if err != nil {
			return nil, err
		}
		for i, e := range res.Entries {
			if e.Error == nil {
				continue
			}
			out = append(out, RefusedEntry{Batch: id, Producer: producer, Seq: seq, Entry: i,
				Op: e.Op, Stream: e.Stream, Error: *e.Error, IngestedAt: res.IngestedAt})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list refused entries: %w", err)
	}
	return out, nil
}
