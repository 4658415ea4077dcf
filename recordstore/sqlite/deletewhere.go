// DeleteWhere: deleting the rows of a bound kind's stream that match a
// condition its caller writes, for callers whose rows leave by their own
// column values (the Drakkar cache's expired entries), not by append time.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// DeleteWhere deletes, in one write transaction, the rows of stream — a
// live stream of a bound kind (see recordstore.BoundTable) — for which
// the SQL condition where holds, with args bound to its parameters, and
// returns how many it deleted. The condition is the caller's own text,
// run as DELETE FROM <table> WHERE (<where>): it names the table's
// columns, and it must never be built from untrusted input. The stream's
// row count and lowest seq follow; followers are woken when a row went.
//
// It is an owner's operation only: a read-only backend refuses with
// recordstore.ErrReadOnly (no spool batch carries it). A stream that is
// not live is recordstore.ErrNotFound, a kind that is not bound
// recordstore.ErrInvalid, a condition SQLite refuses its error. On error
// nothing is deleted.
func (b *Backend) DeleteWhere(ctx context.Context, stream, where string, args ...any) (int64, error) {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return 0, err
	}
	if strings.TrimSpace(where) == "" {
		return 0, recordstore.Invalidf("delete rows of %s: the condition is empty", stream)
	}
	if err := b.enter(); err != nil {
		return 0, err
	}
	defer b.leave()
	if b.readOnly {
		return 0, fmt.Errorf("delete rows of %s: %w", stream, recordstore.ErrReadOnly)
	}
	var n int64
	err := b.writeTx(ctx, func(tx *sql.Tx, now time.Time) error {
		var err error
		n, err = b.deleteWhereTx(ctx, tx, stream, where, args, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete rows of %s: %w", stream, err)
	}
	if n > 0 {
		b.notifier.Notify(stream)
	}
	return n, nil
}

// deleteWhereTx is DeleteWhere's transaction body.
func (b *Backend) deleteWhereTx(ctx context.Context, tx *sql.Tx, stream, where string, args []any, now time.Time) (int64, error) {
	s, err := b.liveStreamTx(ctx, tx, stream, now)
	if err != nil {
		return 0, err
	}
	t := b.tables.get(s.kind)
	if t == nil {
		return 0, corrupt("stream %s has kind %s, which is not loaded", stream, s.kind)
	}
	if !t.layout.bound {
		return 0, recordstore.Invalidf("stream %s: kind %s is not bound to a table of its caller's", stream, s.kind)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM "+quote(t.name)+" WHERE ("+where+")", args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, err
	}
	s.total -= n
	if err := t.lowSeqTx(ctx, tx, &s); err != nil {
		return 0, err
	}
	s.updated = recordstore.FormatDatetime(now)
	return n, s.putCounters(ctx, tx, b.ws)
}
