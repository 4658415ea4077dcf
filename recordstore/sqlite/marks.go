// Producer marks: the writer's memory of each producer's highest seq in
// the ledger, so that AppendBatch does not look up in the ledger a batch
// that cannot be there.

package sqlite

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// producerMarks maps a producer instance to the highest producer seq the
// ledger holds for it, as this writer knows it: read from the ledger the
// first time the producer is met, raised after each commit that records
// its batches. A batch whose seq is above its producer's mark is not in
// the ledger, so its lookup is skipped: a producer's seqs only grow and
// each batch has one id.
//
// A mark may be too high (a sweep removed the rows at the top), which only
// costs a lookup. It is never too low as long as this writer writes every
// ledger row, which the epoch check makes so. Should it be wrong anyway (a
// producer that reused a batch id under a higher seq, say), the ledger's
// primary key refuses the second row (errLedgerConflict), and AppendBatch
// forgets every mark and plans the call again with the lookups. A batch
// whose schemas would change the catalog is looked up before they do
// (confirmNew), so that such a replay declares nothing either.
type producerMarks map[string]int64

// maxProducerMarks bounds the marks kept; when full they start over.
const maxProducerMarks = 4096

// unrecorded reports whether batch is certainly not in the ledger: it is
// not a retry, and its seq is above its producer's mark, read from the
// ledger first when the producer is new to the marks. The caller holds
// the write lock.
func (b *Backend) unrecorded(ctx context.Context, batch *recordstore.Batch) (bool, error) {
	inst, seq := batch.Producer.Instance, batch.Producer.Seq
	if batch.Retry || inst == "" || seq <= 0 {
		return false, nil
	}
	mark, ok := b.marks[inst]
	if !ok {
		if err := b.ledger.mark.QueryRowContext(ctx, inst).Scan(&mark); err != nil {
			return false, fmt.Errorf("read producer %s in the ledger: %w", inst, err)
		}
		if b.marks == nil || len(b.marks) >= maxProducerMarks {
			b.marks = producerMarks{}
		}
		b.marks[inst] = mark
	}
	return seq > mark, nil
}

// raise records, after their transaction committed, the seqs of the
// batches it wrote to the ledger. Producers without a mark get none: what
// else the ledger holds for them is not known here.
func (m producerMarks) raise(plans []batchPlan) {
	for i := range plans {
		p := &plans[i]
		if p.dupOf >= 0 || p.recorded != nil {
			continue
		}
		inst, seq := p.batch.Producer.Instance, p.batch.Producer.Seq
		if mark, ok := m[inst]; ok && seq > mark {
			m[inst] = seq
		}
	}
}
