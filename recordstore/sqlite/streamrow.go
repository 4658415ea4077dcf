// A stream's bookkeeping row (record_streams): loading it, deciding whether
// it is live, writing it back, and turning it into a recordstore.Meta.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// streamRow is one row of record_streams. Times are stored text
// (recordstore.DatetimeLayout).
type streamRow struct {
	no         int64 // record_streams.no; 0 until the row is first written
	id         string
	kind       string
	generation int64
	high, low  int64
	total      int64
	sealed     bool
	deleted    bool
	created    string
	updated    string
	expires    sql.NullString
}

// loadStream reads the row of stream through st (the getStream statement,
// bound to a transaction or the reader pool). found is false when the
// stream was never created. A read that fails once ctx has ended fails
// with ctx's error (context.Cause), whatever the driver said.
func loadStream(ctx context.Context, st *sql.Stmt, id string) (s streamRow, found bool, err error) {
	s.id = id
	err = st.QueryRowContext(ctx, id).Scan(&s.no, &s.kind, &s.generation, &s.high, &s.low, &s.total,
		&s.sealed, &s.deleted, &s.created, &s.updated, &s.expires)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		if cerr := context.Cause(ctx); cerr != nil {
			// A statement bound to a transaction begun with ctx is closed
			// by database/sql as soon as ctx ends (it rolls the
			// transaction back on its own goroutine): the query then
			// fails with "statement is closed", which says nothing of
			// why. The reason is ctx.
			err = cerr
		}
		return s, false, fmt.Errorf("read stream %s: %w", id, err)
	}
	return s, true, nil
}

// live reports whether the stream is readable at now (stored text): not
// deleted and not expired.
func (s *streamRow) live(now string) bool {
	return !s.deleted && (!s.expires.Valid || s.expires.String > now)
}

// newGeneration returns the empty row of generation gen of stream number no
// (0 for a new stream) and id, of kind k, created at now. A kind with
// stream retention expires ttl later.
func newGeneration(no int64, id string, k *recordstore.Kind, gen int64, now time.Time) streamRow {
	ns := recordstore.FormatDatetime(now)
	s := streamRow{no: no, id: id, kind: k.Name, generation: gen, high: 0, low: 1, created: ns, updated: ns}
	if r := k.Retention; r != nil && r.Mode == recordstore.RetainStream {
		s.expires = sql.NullString{String: recordstore.FormatDatetime(now.Add(time.Duration(r.TTL))), Valid: true}
	}
	return s
}

// put writes the whole row; a stream without a number is inserted and
// gets one.
func (s *streamRow) put(ctx context.Context, tx *sql.Tx, ws *writeStmts) error {
	if s.no == 0 {
		r, err := tx.StmtContext(ctx, ws.newStream).ExecContext(ctx, s.id, s.kind, s.generation, s.high, s.low,
			s.total, s.sealed, s.deleted, s.created, s.updated, s.expires)
		if err == nil {
			s.no, err = r.LastInsertId()
		}
		if err != nil {
			return fmt.Errorf("create stream %s: %w", s.id, err)
		}
		return nil
	}
	_, err := tx.StmtContext(ctx, ws.putStream).ExecContext(ctx, s.no, s.kind, s.generation, s.high, s.low,
		s.total, s.sealed, s.deleted, s.created, s.updated, s.expires)
	if err != nil {
		return fmt.Errorf("write stream %s: %w", s.id, err)
	}
	return nil
}

// putCounters writes only the seq counters, total and update time, leaving
// the indexed columns untouched.
func (s *streamRow) putCounters(ctx context.Context, tx *sql.Tx, ws *writeStmts) error {
	_, err := tx.StmtContext(ctx, ws.updateCounters).ExecContext(ctx, s.no, s.high, s.low, s.total, s.updated)
	if err != nil {
		return fmt.Errorf("write stream %s: %w", s.id, err)
	}
	return nil
}

// meta turns the row into the Meta callers see.
func (s *streamRow) meta() recordstore.Meta {
	m := recordstore.Meta{
		Stream: s.id, Kind: s.kind, Generation: s.generation,
		Total: s.total, LowSeq: s.low, HighSeq: s.high, Sealed: s.sealed,
		CreatedAt: parseStored(s.created), UpdatedAt: parseStored(s.updated),
	}
	if s.expires.Valid {
		t := parseStored(s.expires.String)
		m.ExpiresAt = &t
	}
	return m
}

// parseStored parses a stored datetime; the zero time when malformed.
func parseStored(v string) time.Time {
	t, err := time.Parse(recordstore.DatetimeLayout, v)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
