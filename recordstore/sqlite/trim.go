// Trimming: deleting the rows of the appends made before a cut-off, for
// Trim and for row retention.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// trimAppendsTx deletes the rows of the stream's appends made before the
// cut-off (stored text) and those appends, and updates s's total and low
// seq (not written). trimmed reports whether any row was removed: appends
// whose rows were all replaced since go without changing the stream.
func (b *Backend) trimAppendsTx(ctx context.Context, tx *sql.Tx, t *table, s *streamRow, before string) (trimmed bool, err error) {
	ranges, err := appendsBefore(ctx, tx.StmtContext(ctx, b.ws.appendsBefore), s, before)
	if err != nil || len(ranges) == 0 {
		return false, err
	}
	del := tx.StmtContext(ctx, t.deleteRange)
	var removed int64
	for _, r := range ranges {
		res, err := del.ExecContext(ctx, s.no, r.from, r.to)
		if err != nil {
			return false, fmt.Errorf("trim rows of %s: %w", s.id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("trim rows of %s: %w", s.id, err)
		}
		removed += n
	}
	if _, err := tx.StmtContext(ctx, b.ws.deleteAppendsBefore).ExecContext(ctx, s.no, before); err != nil {
		return false, fmt.Errorf("trim appends of %s: %w", s.id, err)
	}
	if removed == 0 {
		return false, nil
	}
	s.total -= removed
	return true, t.lowSeqTx(ctx, tx, s)
}

// seqRange is a closed range of seqs written by one or more appends.
type seqRange struct{ from, to int64 }

// appendsBefore returns the seq ranges of the stream's appends made before
// the cut-off, sorted, with adjacent ranges merged (every seq belongs to
// exactly one append, so adjacent ranges leave nothing between them).
func appendsBefore(ctx context.Context, st *sql.Stmt, s *streamRow, before string) ([]seqRange, error) {
	stream := s.id
	rows, err := st.QueryContext(ctx, s.no, before)
	if err != nil {
		return nil, fmt.Errorf("read appends of %s: %w", stream, err)
	}
	defer rows.Close()
	var out []seqRange
	for rows.Next() {
		var r seqRange
		if err := rows.Scan(&r.from, &r.to); err != nil {
			return nil, fmt.Errorf("read appends of %s: %w", stream, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read appends of %s: %w", stream, err)
	}
	slices.SortFunc(out, func(a, b seqRange) int { return int(a.from - b.from) })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && merged[n-1].to+1 == r.from {
			merged[n-1].to = r.to
			continue
		}
		merged = append(merged, r)
	}
	return merged, nil
}
