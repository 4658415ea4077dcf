// Appending rows of stored values read from a RowSource: the rows are
// remapped into the catalog's column order and inserted as they are read,
// so that a large append is never held as one Values slice per row.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// AppendSource appends the rows of src to stream in one all-or-nothing
// append, as Append does with caller rows. The rows are stored values of
// kind (see recordstore.Values: what kind.Normalize returns), kind being
// the caller's declaration of a kind of the catalog; they are remapped into
// the catalog's column order (a column the catalog lacks, or of another
// type, is ErrSchemaConflict) and read from src while earlier rows are
// inserted; each row is let go once it is inserted. A key repeated among
// the rows, or a row src cannot give, is ErrInvalid ("row N", counted
// from 1). On any error nothing of the append is stored. A read-only
// backend checks the append as PrepareAppendSource does and submits it
// (see Options.Submit). src is read at most once and not closed.
func (b *Backend) AppendSource(ctx context.Context, stream string, kind recordstore.Kind, src recordstore.RowSource) (recordstore.AppendResult, error) {
	if err := checkAppendSource(stream, kind, src); err != nil {
		return recordstore.AppendResult{}, err
	}
	if err := b.enter(); err != nil {
		return recordstore.AppendResult{}, err
	}
	if b.readOnly {
		b.leave()
		return b.appendSourceReadOnly(ctx, stream, kind, src)
	}
	defer b.leave()
	what := "append to " + stream
	t, err := b.table(ctx, kind.Name)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("%s: %w", what, err)
	}
	m, err := recordstore.NewRemapper(&kind, &t.kind)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("%s: %w", what, err)
	}
	feed, err := t.feedSource(src, m)
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("%s: %w", what, err)
	}
	var res recordstore.AppendResult
	err = b.writeTx(ctx, func(tx *sql.Tx, now time.Time) error {
		res, err = b.appendTx(ctx, tx, t, stream, feed, now)
		return err
	})
	if err != nil {
		return recordstore.AppendResult{}, fmt.Errorf("%s: %w", what, feed.settle(err))
	}
	b.notifier.Notify(stream)
	return res, nil
}

// appendSourceReadOnly is AppendSource in a read-only backend: checked
// locally, then submitted.
func (b *Backend) appendSourceReadOnly(ctx context.Context, stream string, kind recordstore.Kind, src recordstore.RowSource) (recordstore.AppendResult, error) {
	batch, err := b.PrepareAppendSource(ctx, stream, kind, false, src)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	return b.submitAppend(ctx, stream, batch)
}

// PrepareAppendSource checks an append of the rows of src (stored values
// of kind, as AppendSource takes them) to stream as the store's owner
// would apply it, and returns the one batch that carries it, as
// PrepareAppend does for caller rows; it reads src to its end and holds
// the rows in the batch. With declare, kind is checked as DeclareKind
// would check it and the batch declares it ahead of the rows; without,
// the rows are remapped into the catalog's declaration of kind. It writes
// nothing, in either mode.
func (b *Backend) PrepareAppendSource(ctx context.Context, stream string, kind recordstore.Kind, declare bool, src recordstore.RowSource) (recordstore.Batch, error) {
	t, m, err := b.sourcePlan(ctx, stream, kind, declare, src)
	if err != nil {
		return recordstore.Batch{}, err
	}
	what := "append to " + stream
	feed, err := t.feedSource(src, m)
	if err == nil {
		err = feed.wait(feed.len())
	}
	if err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	if err := b.checkStreamTakes(ctx, stream, kind.Name); err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	batch := recordstore.Batch{Schemas: []recordstore.Kind{t.kind}}
	if declare {
		batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: kind.Name})
	}
	batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: kind.Name, Rows: feed.all()})
	return batch, nil
}

// sourcePlan checks an append of src's rows to stream and returns the
// table the rows are checked against (sourceTable) and the remapper from
// kind into it; its errors name the append.
func (b *Backend) sourcePlan(ctx context.Context, stream string, kind recordstore.Kind, declare bool, src recordstore.RowSource) (*table, *recordstore.Remapper, error) {
	if err := checkAppendSource(stream, kind, src); err != nil {
		return nil, nil, err
	}
	t, err := b.sourceTable(ctx, kind, declare)
	if err != nil {
		return nil, nil, fmt.Errorf("append to %s: %w", stream, err)
	}
	m, err := recordstore.NewRemapper(&kind, &t.kind)
	if err != nil {
		return nil, nil, fmt.Errorf("append to %s: %w", stream, err)
	}
	return t, m, nil
}

// sourceTable is the table PrepareAppendSource checks rows against: kind
// itself when it is declared with them, else the catalog's (read again
// once when kind has columns this process does not know of yet).
func (b *Backend) sourceTable(ctx context.Context, kind recordstore.Kind, declare bool) (*table, error) {
	if declare {
		if _, err := b.CheckDeclare(ctx, kind); err != nil {
			return nil, err
		}
		return newTable(ctx, nil, nil, kind, kind.Name) // no statements: nothing is prepared
	}
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	t, err := b.table(ctx, kind.Name)
	if err != nil {
		return nil, err
	}
	if _, rerr := recordstore.NewRemapper(&kind, &t.kind); rerr != nil {
		if fresh, err := b.reloadTable(ctx, kind.Name); err == nil {
			return fresh, nil
		}
	}
	return t, nil
}

// checkAppendSource checks what AppendSource and PrepareAppendSource are
// given, before anything is read.
func checkAppendSource(stream string, kind recordstore.Kind, src recordstore.RowSource) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if err := recordstore.ValidateKindName(kind.Name); err != nil {
		return err
	}
	if src == nil || src.Len() == 0 {
		return recordstore.Invalidf("append to %s: no rows", stream)
	}
	return nil
}

// PrepareAppendStream is PrepareAppendSource for rows that it does not
// hold: it checks the stream and the kind (kind itself, checked as
// DeclareKind would and declared ahead of the rows, with declare; else the
// catalog's declaration, into whose column order the rows are remapped),
// that the stream takes rows of that kind, and — for a kind with a key —
// that no key is repeated among the rows, reading them once (their keys
// held as an append holds them: recordstore.KeySet), with PrepareAppendSource's errors. It returns
// the batch whose append entry streams the rows (BatchEntry.Source, a
// fresh source of rows) instead of holding them. That source remaps each
// row as it is read; a row that does not fit (ErrInvalid,
// ErrSchemaConflict) fails the read, which fails the batch's publish
// (spool.Dir.Publish writes nothing then). It writes nothing.
func (b *Backend) PrepareAppendStream(ctx context.Context, stream string, kind recordstore.Kind, declare bool, rows recordstore.Rows) (recordstore.Batch, error) {
	if rows == nil {
		return recordstore.Batch{}, recordstore.Invalidf("append to %s: no rows", stream)
	}
	t, m, err := b.sourcePlan(ctx, stream, kind, declare, rows.Source())
	if err != nil {
		return recordstore.Batch{}, err
	}
	what := "append to " + stream
	if err := b.checkStreamTakes(ctx, stream, kind.Name); err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	if err := t.checkKeys(remappedSource{src: rows.Source(), m: m}); err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	batch := recordstore.Batch{Schemas: []recordstore.Kind{t.kind}}
	if declare {
		batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: kind.Name})
	}
	batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: kind.Name,
		Source: remappedSource{src: rows.Source(), m: m}})
	return batch, nil
}

// checkKeys reads src, rows of t's kind, and refuses a key repeated among
// them, as an append does; a kind without a key reads nothing.
func (t *table) checkKeys(src recordstore.RowSource) error {
	keys := t.newKeySet()
	if keys == nil {
		return nil
	}
	defer func() { _ = keys.Close() }() // a scratch file at most
	for i := range src.Len() {
		v, err := src.Next()
		if err == io.EOF {
			return keyErrorFirst(keys, recordstore.Invalidf("the row source ended after %d of the %d rows it announced", i, src.Len()))
		}
		if err != nil {
			return keyErrorFirst(keys, fmt.Errorf("row %d: %w", i+1, err))
		}
		if err := keys.Add(i, v); err != nil {
			return err
		}
	}
	return keys.Check()
}

// remappedSource is a RowSource whose rows are remapped as they are read.
type remappedSource struct {
	src recordstore.RowSource
	m   *recordstore.Remapper
}

// Len is the source's.
func (r remappedSource) Len() int { return r.src.Len() }

// Next reads the next row and remaps it.
func (r remappedSource) Next() (recordstore.Values, error) {
	v, err := r.src.Next()
	if err != nil {
		return nil, err
	}
	return r.m.Remap(v)
}
