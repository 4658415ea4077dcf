// Planning a group of batches before their transaction: which are in the
// ledger already, reconciling each batch's own schemas with the catalog
// (declaring new kinds, adding new columns), and checking every entry that
// can be checked without the stream.

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fb46ecde/records/recordstore"
)

// batchPlan is one batch of an AppendBatch call, ready to apply.
type batchPlan struct {
	batch    *recordstore.Batch
	dupOf    int                      // an earlier batch of the call with the same id, or -1
	recorded *recordstore.BatchResult // the ledger's result when the batch was applied before
	replaces bool                     // the ledger records it as failed, and it is a Retry
	unlooked bool                     // taken as new by its producer mark, not looked up yet
	entries  []entryPlan
}

// entryPlan is one entry, checked: err refuses it before the transaction;
// an append carries its kind's table and the remapper of its rows; a
// declare its status.
type entryPlan struct {
	e      *recordstore.BatchEntry
	err    error
	t      *table
	remap  *recordstore.Remapper
	status recordstore.KindStatus
}

// kindPlan is what a batch's schema of a kind resolved to: the stored
// kind's table and the batch's declaration (rows are in its column order),
// what declaring it did, or the error that makes the kind's entries fail.
type kindPlan struct {
	t      *table
	from   *recordstore.Kind
	status recordstore.KindStatus
	err    error
}

// planBatches plans every batch of a call. The caller holds the write lock
// and no transaction: new kinds and columns are committed here, each in
// its own transaction, before the batches' own. An error (I/O, ctx) fails
// the whole call.
func (b *Backend) planBatches(ctx context.Context, batches []recordstore.Batch, useMarks bool) ([]batchPlan, error) {
	plans := make([]batchPlan, len(batches))
	first := make(map[string]int, len(batches))
	ids := make([]string, 0, len(batches))
	for i := range batches {
		p := &plans[i]
		p.batch, p.dupOf = &batches[i], -1
		if j, dup := first[p.batch.ID]; dup {
			p.dupOf = j
			continue
		}
		first[p.batch.ID] = i
		if useMarks {
			fresh, err := b.unrecorded(ctx, p.batch)
			if err != nil {
				return nil, err
			}
			if fresh {
				p.unlooked = true // not in the ledger: no lookup, unless it declares
				continue
			}
		}
		ids = append(ids, p.batch.ID)
	}
	recorded, err := b.ledger.lookup(ctx, ids)
	if err != nil {
		return nil, err
	}
	memo := schemaMemo{}
	for i := range plans {
		p := &plans[i]
		if p.dupOf >= 0 {
			continue
		}
		if rec, found := recorded[p.batch.ID]; found {
			if !p.batch.Retry || rec.Outcome != recordstore.OutcomeFailed {
				p.recorded = &rec
				continue
			}
			p.replaces = true // a failed batch put back: apply it again
		}
		if p.batch.Failure != nil {
			continue
		}
		p.entries, err = b.planEntries(ctx, p, memo)
		if errors.Is(err, errRecordedBatch) {
			p.entries = nil // p.recorded is set: a replay writes nothing
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", p.batch.ID, err)
		}
	}
	return plans, nil
}

// schemaMemo remembers, per kind name, the last schema of an AppendBatch
// call resolved additively and what it resolved to: the batches of one
// producer usually all carry the same schemas.
type schemaMemo map[string]struct {
	schema recordstore.Kind
	plan   kindPlan
}

// sameKind reports whether two declarations are identical.
func sameKind(a, b *recordstore.Kind) bool {
	return a.Name == b.Name && slices.Equal(a.Columns, b.Columns) && slices.Equal(a.Key, b.Key) &&
		a.OnConflict == b.OnConflict && equalPtr(a.LWW, b.LWW) && equalPtr(a.Retention, b.Retention) &&
		a.TimeColumn == b.TimeColumn && slices.EqualFunc(a.Indexes, b.Indexes, slices.Equal[[]string]) &&
		a.Table.Equal(b.Table)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// errRecordedBatch: a batch its producer mark took as new is in the ledger
// after all, found by confirmNew before its schemas declared anything.
var errRecordedBatch = errors.New("batch id in the ledger")

// confirmNew looks up in the ledger a batch that its producer mark took as
// new, before one of its schemas declares a kind or adds a column: a
// recorded id sent again under a higher producer seq (see producerMarks)
// must write nothing, not even its schemas. It returns errRecordedBatch,
// with p.recorded set, when the id is recorded.
func (b *Backend) confirmNew(ctx context.Context, p *batchPlan) error {
	if !p.unlooked {
		return nil
	}
	recorded, err := b.ledger.lookup(ctx, []string{p.batch.ID})
	if err != nil {
		return err
	}
	p.unlooked = false
	if rec, found := recorded[p.batch.ID]; found {
		p.recorded = &rec
		return errRecordedBatch
	}
	return nil
}

// planEntries resolves the batch's schemas, then checks its entries. It
// returns errRecordedBatch when confirmNew finds the batch recorded.
func (b *Backend) planEntries(ctx context.Context, p *batchPlan, memo schemaMemo) ([]entryPlan, error) {
	batch := p.batch
	strict := map[string]bool{}
	for _, e := range batch.Entries {
		if e.Op == recordstore.OpDeclare {
			strict[e.Kind] = true
		}
	}
	kinds := make(map[string]kindPlan, len(batch.Schemas))
	for i := range batch.Schemas {
		s := batch.Schemas[i]
		if _, dup := kinds[s.Name]; dup {
			kinds[s.Name] = kindPlan{err: recordstore.Invalidf("the batch has two schemas of kind %s", s.Name)}
			continue
		}
		if m, ok := memo[s.Name]; ok && !strict[s.Name] && sameKind(&m.schema, &s) {
			kinds[s.Name] = m.plan
			continue
		}
		kp, err := b.resolveSchema(ctx, s, strict[s.Name], p)
		if err != nil {
			return nil, err
		}
		kinds[s.Name] = kp
		if !strict[s.Name] {
			memo[s.Name] = struct {
				schema recordstore.Kind
				plan   kindPlan
			}{s, kp}
		}
	}
	out := make([]entryPlan, len(batch.Entries))
	for i := range batch.Entries {
		p, err := b.planEntry(ctx, &batch.Entries[i], kinds)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// resolveSchema reconciles a batch's schema k with the catalog: a new kind
// is declared; a kind that gains columns has them added (additively: k may
// omit stored columns), unless the batch declares k (strict, as
// DeclareKind does). A changed key, type, policy or other difference is
// the kind's error (ErrSchemaConflict); the stored kind never changes
// otherwise. Before it changes the catalog it confirms that p is new
// (confirmNew). The returned error is for failures of the whole call, or
// errRecordedBatch.
func (b *Backend) resolveSchema(ctx context.Context, k recordstore.Kind, strict bool, p *batchPlan) (kindPlan, error) {
	if err := k.ValidateStored(); err != nil { // the rest in declareTx: see checkDeclaration
		return kindPlan{err: err}, nil
	}
	if reservedTable(k.Name) {
		return kindPlan{err: recordstore.Invalidf("kind name %s: the prefixes record_ and sqlite_ are reserved", recordstore.Quote(k.Name))}, nil
	}
	t, err := b.table(ctx, k.Name)
	switch {
	case errors.Is(err, recordstore.ErrNotFound):
	case err != nil:
		return kindPlan{}, err
	default:
		_, status, err := recordstore.Reconcile(t.kind, k, !strict)
		if err != nil {
			return kindPlan{err: err}, nil
		}
		if status == recordstore.KindUnchanged {
			return kindPlan{t: t, from: &k, status: status}, nil
		}
	}
	if err := b.confirmNew(ctx, p); err != nil {
		return kindPlan{}, err
	}
	t, status, err := b.declareLocked(ctx, k, !strict)
	if err != nil {
		if fatal(ctx, err) {
			return kindPlan{}, fmt.Errorf("declare kind %s: %w", k.Name, err)
		}
		return kindPlan{err: err}, nil
	}
	b.log.Debug("kind declared by a batch", "kind", k.Name, "status", string(status))
	return kindPlan{t: t, from: &k, status: status}, nil
}

// planEntry checks one entry against the batch's resolved kinds and the
// catalog. The returned error is for failures of the whole call.
func (b *Backend) planEntry(ctx context.Context, e *recordstore.BatchEntry, kinds map[string]kindPlan) (entryPlan, error) {
	p := entryPlan{e: e}
	switch e.Op {
	case recordstore.OpDeclare:
		kp, ok := kinds[e.Kind]
		if !ok {
			p.err = recordstore.Invalidf("declare: the batch has no schema of kind %s", recordstore.Quote(e.Kind))
			return p, nil
		}
		p.status, p.err = kp.status, kp.err
		return p, nil
	case recordstore.OpSeal, recordstore.OpReopen, recordstore.OpDelete, recordstore.OpTrim:
	case recordstore.OpExpire:
		if e.TTL <= 0 {
			p.err = recordstore.Invalidf("expire %s: ttl %v must be positive", e.Stream, e.TTL)
			return p, nil
		}
	case recordstore.OpAppend:
		return b.planAppend(ctx, p, kinds)
	default:
		p.err = recordstore.Invalidf("unknown operation %s", recordstore.Quote(string(e.Op)))
		return p, nil
	}
	p.err = recordstore.ValidateStreamID(e.Stream)
	return p, nil
}

// planAppend finds an append's table — the batch's schema of its kind as
// resolved, else the catalog's kind as is (rows then follow the catalog's
// column order) — and builds the remapper of its rows.
func (b *Backend) planAppend(ctx context.Context, p entryPlan, kinds map[string]kindPlan) (entryPlan, error) {
	e := p.e
	if p.err = recordstore.ValidateStreamID(e.Stream); p.err != nil {
		return p, nil
	}
	if p.err = recordstore.ValidateKindName(e.Kind); p.err != nil {
		return p, nil
	}
	var from *recordstore.Kind
	if kp, ok := kinds[e.Kind]; ok {
		if p.err = kp.err; p.err != nil {
			return p, nil
		}
		p.t, from = kp.t, kp.from
	} else {
		t, err := b.table(ctx, e.Kind)
		if errors.Is(err, recordstore.ErrNotFound) {
			p.err = err
			return p, nil
		}
		if err != nil {
			return p, err
		}
		p.t, from = t, &t.kind
	}
	p.remap, p.err = recordstore.NewRemapper(from, &p.t.kind)
	return p, nil
}

// fatal reports whether an error fails a whole AppendBatch call rather
// than one entry or kind: it wraps none of the recordstore sentinels (I/O,
// a corrupt file, a busy database), or ctx ended.
func fatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || recordstore.Code(err) == recordstore.CodeInternal
}
