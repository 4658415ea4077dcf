// Preparing a write: checking it locally, as the store's owner would apply
// it, and building the batch that carries it. A read-only backend submits
// what it prepares; the owner package publishes it without waiting, or
// with a declaration in the append's own batch.

package sqlite

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// PrepareAppend checks an append of rows of kind to stream as the store's
// owner would apply it, and returns the one batch that carries it: the
// rows normalized in the kind's column order, with that kind as the
// batch's schema. When declare is not nil (a declaration of kind), the
// rows are checked against it instead of the catalog's kind, and the batch
// declares it first, strictly as DeclareKind does: the owner declares it
// and appends, or refuses both when the declaration conflicts with its
// catalog. It writes nothing, in either mode.
//
// The checks: the declaration is valid and reconciles with the catalog's;
// without one the kind is in the catalog; every row fits, no key repeated
// among them (ErrInvalid, rows counted from 1); the stream is not a live
// stream of another kind (ErrSchemaConflict) nor sealed (ErrSealed).
func (b *Backend) PrepareAppend(ctx context.Context, stream, kind string, declare *recordstore.Kind, rows []recordstore.Row) (recordstore.Batch, error) {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.Batch{}, err
	}
	if err := recordstore.ValidateKindName(kind); err != nil {
		return recordstore.Batch{}, err
	}
	if len(rows) == 0 {
		return recordstore.Batch{}, recordstore.Invalidf("append to %s: no rows", stream)
	}
	if declare != nil && declare.Name != kind {
		return recordstore.Batch{}, recordstore.Invalidf("append to %s: the declaration is of kind %s, not %s", stream, declare.Name, kind)
	}
	var t *table
	var vals []recordstore.Values
	var err error
	if declare != nil {
		t, vals, err = b.checkDeclaredAppend(ctx, stream, *declare, rows)
	} else {
		t, vals, err = b.checkAppend(ctx, stream, kind, rows)
	}
	if err != nil {
		return recordstore.Batch{}, err
	}
	batch := recordstore.Batch{Schemas: []recordstore.Kind{t.kind}}
	if declare != nil {
		batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: kind})
	}
	batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: kind, Rows: vals})
	return batch, nil
}

// checkDeclaredAppend is PrepareAppend's check of rows against a kind
// declared with them: k is checked as DeclareKind would check it (errors
// name the kind), the rows against k, and the stream as checkAppend does.
func (b *Backend) checkDeclaredAppend(ctx context.Context, stream string, k recordstore.Kind, rows []recordstore.Row) (*table, []recordstore.Values, error) {
	if _, err := b.CheckDeclare(ctx, k); err != nil {
		return nil, nil, err
	}
	t, err := newTable(ctx, nil, nil, k, k.Name) // no statements: nothing is prepared
	if err != nil {
		return nil, nil, err
	}
	what := "append to " + stream
	vals, err := t.normalize(rows)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := b.checkStreamTakes(ctx, stream, k.Name); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return t, vals, nil
}

// CheckDeclare checks k as DeclareKind would, without declaring it: k is
// valid and reconciles strictly with the catalog's declaration of its name,
// if any. It returns what declaring k would do (KindCreated when the
// catalog lacks it). It writes nothing.
func (b *Backend) CheckDeclare(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	// The rules every build held a kind to first; the newer ones
	// (checkDeclaration) once it is known not to be a kind stored as it is.
	if err := k.ValidateStored(); err != nil {
		return "", err
	}
	if reservedTable(k.Name) {
		return "", recordstore.Invalidf("kind name %q: the prefixes record_ and sqlite_ are reserved", k.Name)
	}
	return b.checkDeclare(ctx, k)
}

// PrepareDeclare checks every kind of kinds as CheckDeclare does and
// returns the batch that declares them all, in order, each strictly as
// DeclareKind does (the owner answers KindUnchanged for one it has as
// declared). When one kind is refused, the error names it and nothing is
// returned. It writes nothing.
func (b *Backend) PrepareDeclare(ctx context.Context, kinds []recordstore.Kind) (recordstore.Batch, error) {
	return recordstore.DeclareBatch(ctx, kinds, b.CheckDeclare)
}

// PrepareEntry checks a stream operation (seal, reopen, expire, trim,
// delete) as the store's owner would apply it — the stream is live; for
// reopen, at e.Generation — and returns the one batch that carries it. It
// writes nothing.
func (b *Backend) PrepareEntry(ctx context.Context, e recordstore.BatchEntry) (recordstore.Batch, error) {
	what := string(e.Op) + " " + e.Stream
	switch e.Op {
	case recordstore.OpSeal, recordstore.OpReopen, recordstore.OpExpire, recordstore.OpTrim, recordstore.OpDelete:
	default:
		return recordstore.Batch{}, recordstore.Invalidf("%s: not a stream operation", what)
	}
	if err := recordstore.ValidateStreamID(e.Stream); err != nil {
		return recordstore.Batch{}, err
	}
	if e.Op == recordstore.OpExpire && e.TTL <= 0 {
		return recordstore.Batch{}, recordstore.Invalidf("expire %s: ttl %v must be positive", e.Stream, e.TTL)
	}
	if err := b.checkLive(ctx, e); err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	return recordstore.Batch{Entries: []recordstore.BatchEntry{e}}, nil
}
