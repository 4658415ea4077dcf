// The reference model of recordstore.BatchAppender: the model plus an
// in-memory ledger, each entry applied through the model's own methods
// against a copy of the state taken before it (its savepoint).

package recordstoretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// modelBatches implements recordstore.BatchAppender over the model. It
// favours being obviously right: every entry saves the whole state first
// and puts it back when the entry is refused.
type modelBatches struct {
	*model
	call sync.Mutex // serializes AppendBatch calls

	ledger struct {
		sync.Mutex
		rows map[string]recordstore.BatchResult
		seqs map[string]recordstore.Producer // the producer of every recorded batch
	}
}

var _ recordstore.BatchAppender = (*modelBatches)(nil)

// modelEpoch is the model's writer epoch: it never changes.
const modelEpoch = 1

// newModelBatches returns an empty model with an empty ledger.
func newModelBatches(clock *Clock) *modelBatches {
	mb := &modelBatches{model: newModel(clock)}
	mb.ledger.rows = map[string]recordstore.BatchResult{}
	mb.ledger.seqs = map[string]recordstore.Producer{}
	return mb
}

// modelState is a copy of everything the model stores.
type modelState struct {
	kinds       map[string]recordstore.Kind
	streams     map[string]*modelStream
	generations map[string]int64
}

// save copies the model's state.
func (m *model) save() modelState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyState(modelState{m.mu.kinds, m.mu.streams, m.mu.generations})
}

// restore puts a saved state back.
func (m *model) restore(st modelState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st = copyState(st)
	m.mu.kinds, m.mu.streams, m.mu.generations = st.kinds, st.streams, st.generations
}

func copyState(st modelState) modelState {
	out := modelState{kinds: maps.Clone(st.kinds), generations: maps.Clone(st.generations),
		streams: make(map[string]*modelStream, len(st.streams))}
	for id, s := range st.streams {
		c := *s
		c.rows = slices.Clone(s.rows)
		out.streams[id] = &c
	}
	return out
}

// checkOpen refuses work on a closed model or an ended context.
func (m *model) checkOpen(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.beginLocked(ctx)
}

// modelKindPlan is what a batch's schema of a kind resolved to.
type modelKindPlan struct {
	from   recordstore.Kind // the batch's declaration: its rows follow its columns
	status recordstore.KindStatus
	err    error
}

// sourceFailure marks an error of a RowSource.
type sourceFailure struct{ err error }

func (e *sourceFailure) Error() string { return e.err.Error() }
func (e *sourceFailure) Unwrap() error { return e.err }

// AppendBatch applies batches as recordstore.BatchAppender says: first the
// ledger and the batches' schemas, then every batch, each entry in its own
// savepoint; on an error of the whole call the state of its start is put
// back (kinds declared from schemas excepted) and nothing is recorded.
func (mb *modelBatches) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	for i := range batches {
		if batches[i].ID == "" {
			return nil, recordstore.Invalidf("append batch: batch %d has no id", i)
		}
	}
	if err := mb.checkOpen(ctx); err != nil {
		return nil, err
	}
	mb.call.Lock()
	defer mb.call.Unlock()
	now := mb.now()
	first := map[string]int{}
	plans := make([]map[string]modelKindPlan, len(batches))
	recorded := make([]*recordstore.BatchResult, len(batches))
	for i := range batches {
		b := &batches[i]
		if _, dup := first[b.ID]; dup {
			continue
		}
		first[b.ID] = i
		if rec, ok := mb.recorded(b.ID); ok && (!b.Retry || rec.Outcome != recordstore.OutcomeFailed) {
			recorded[i] = &rec
			continue
		}
		if b.Failure == nil {
			plans[i] = mb.resolveSchemas(ctx, b)
		}
	}
	start := mb.save()
	results := make([]recordstore.BatchResult, len(batches))
	for i := range batches {
		b := &batches[i]
		switch {
		case first[b.ID] != i:
			results[i] = results[first[b.ID]]
			continue
		case recorded[i] != nil:
			results[i] = *recorded[i]
			continue
		}
		res, err := mb.applyBatch(ctx, b, plans[i], now)
		if err != nil {
			mb.restore(start)
			return nil, fmt.Errorf("append batch %s: %w", b.ID, err)
		}
		results[i] = res
	}
	mb.record(batches, results, recorded, first)
	return results, nil
}

// recorded returns the ledger's result of id.
func (mb *modelBatches) recorded(id string) (recordstore.BatchResult, bool) {
	mb.ledger.Lock()
	defer mb.ledger.Unlock()
	res, ok := mb.ledger.rows[id]
	return res, ok
}

// record writes the ledger rows of the batches a call applied.
func (mb *modelBatches) record(batches []recordstore.Batch, results []recordstore.BatchResult, recorded []*recordstore.BatchResult, first map[string]int) {
	mb.ledger.Lock()
	defer mb.ledger.Unlock()
	for i := range batches {
		if first[batches[i].ID] == i && recorded[i] == nil {
			mb.ledger.rows[batches[i].ID] = results[i]
			mb.ledger.seqs[batches[i].ID] = batches[i].Producer
		}
	}
}

// resolveSchemas reconciles a batch's schemas with the model's kinds: new
// kinds are declared, added columns added; a kind the batch declares
// (a declare entry) is declared strictly, as DeclareKind does.
func (mb *modelBatches) resolveSchemas(ctx context.Context, b *recordstore.Batch) map[string]modelKindPlan {
	strict := map[string]bool{}
	for _, e := range b.Entries {
		if e.Op == recordstore.OpDeclare {
			strict[e.Kind] = true
		}
	}
	out := map[string]modelKindPlan{}
	for _, k := range b.Schemas {
		if _, dup := out[k.Name]; dup {
			out[k.Name] = modelKindPlan{err: recordstore.Invalidf("the batch has two schemas of kind %s", k.Name)}
			continue
		}
		k = k.Clone()
		plan := modelKindPlan{from: k}
		if err := k.Validate(); err != nil {
			plan.err = err
			out[k.Name] = plan
			continue
		}
		stored, err := mb.Kind(ctx, k.Name)
		switch {
		case err != nil || strict[k.Name]:
			plan.status, plan.err = mb.DeclareKind(ctx, k)
		default:
			var merged recordstore.Kind
			merged, plan.status, plan.err = recordstore.Reconcile(stored, k, true)
			if plan.err == nil && plan.status == recordstore.KindUpdated {
				plan.status, plan.err = mb.DeclareKind(ctx, merged)
			}
		}
		out[k.Name] = plan
	}
	return out
}

// applyBatch applies one batch's entries, each in its own savepoint. A
// source error with a code fails the batch (its state is put back); one
// without a code is returned.
func (mb *modelBatches) applyBatch(ctx context.Context, b *recordstore.Batch, kinds map[string]modelKindPlan, now time.Time) (recordstore.BatchResult, error) {
	res := recordstore.BatchResult{ID: b.ID, Outcome: recordstore.OutcomeCommitted, Epoch: modelEpoch,
		IngestedAt: now, Entries: []recordstore.EntryResult{}}
	if b.Failure != nil {
		res.Outcome, res.Error = recordstore.OutcomeFailed, b.Failure
		return res, nil
	}
	start := mb.save()
	for i := range b.Entries {
		e := &b.Entries[i]
		savepoint := mb.save()
		r, err := mb.applyEntry(ctx, e, kinds)
		var sf *sourceFailure
		switch {
		case errors.As(err, &sf) && recordstore.Code(sf.err) != recordstore.CodeInternal:
			mb.restore(start)
			res.Outcome, res.Error, res.Entries = recordstore.OutcomeFailed, recordstore.AsBatchError(sf.err), []recordstore.EntryResult{}
			return res, nil
		case errors.As(err, &sf):
			return res, sf.err
		case err != nil:
			mb.restore(savepoint)
			r = recordstore.EntryResult{Op: e.Op, Stream: e.Stream, Error: recordstore.AsBatchError(err)}
		}
		res.Entries = append(res.Entries, r)
	}
	return res, nil
}

// applyEntry applies one entry through the model's methods.
func (mb *modelBatches) applyEntry(ctx context.Context, e *recordstore.BatchEntry, kinds map[string]modelKindPlan) (recordstore.EntryResult, error) {
	r := recordstore.EntryResult{Op: e.Op, Stream: e.Stream}
	var (
		m   recordstore.Meta
		err error
	)
	if e.Generation != 0 && e.Op != recordstore.OpReopen && e.Op != recordstore.OpDeclare {
		if err := mb.fence(ctx, e.Stream, e.Generation); err != nil {
			return r, err
		}
	}
	switch e.Op {
	case recordstore.OpDeclare:
		kp, ok := kinds[e.Kind]
		if !ok {
			return r, recordstore.Invalidf("declare: the batch has no schema of kind %q", e.Kind)
		}
		r.Status = kp.status
		return r, kp.err
	case recordstore.OpAppend:
		return mb.applyAppend(ctx, e, kinds, r)
	case recordstore.OpSeal:
		m, err = mb.Seal(ctx, e.Stream)
	case recordstore.OpReopen:
		m, err = mb.Reopen(ctx, e.Stream, e.Generation)
	case recordstore.OpExpire:
		m, err = mb.Expire(ctx, e.Stream, e.TTL)
	case recordstore.OpTrim:
		m, err = mb.Trim(ctx, e.Stream, e.Before)
	case recordstore.OpDelete:
		return r, mb.Delete(ctx, e.Stream)
	default:
		return r, recordstore.Invalidf("unknown operation %q", e.Op)
	}
	r.Meta = &m
	return r, err
}

// fence refuses (ErrNotFound) an entry for a generation of stream that is
// not the live one.
func (mb *modelBatches) fence(ctx context.Context, stream string, generation int64) error {
	m, err := mb.Meta(ctx, stream)
	if err != nil {
		return err
	}
	if m.Generation != generation {
		return fmt.Errorf("%w: stream %s: generation %d is not the current one (%d)",
			recordstore.ErrNotFound, stream, generation, m.Generation)
	}
	return nil
}

// applyAppend appends an entry's rows (read from its source after the
// entry's kind was found), or creates the stream when there are none, and
// seals it when the entry says so.
func (mb *modelBatches) applyAppend(ctx context.Context, e *recordstore.BatchEntry, kinds map[string]modelKindPlan, r recordstore.EntryResult) (recordstore.EntryResult, error) {
	if err := recordstore.ValidateStreamID(e.Stream); err != nil {
		return r, err
	}
	if err := recordstore.ValidateKindName(e.Kind); err != nil {
		return r, err
	}
	from, err := mb.Kind(ctx, e.Kind)
	if kp, ok := kinds[e.Kind]; ok {
		from, err = kp.from, kp.err
	}
	if err != nil {
		return r, err
	}
	vals := e.Rows
	if e.Source != nil {
		if vals, err = readSource(e.Source); err != nil {
			return r, err
		}
	}
	rows := make([]recordstore.Row, len(vals))
	for i, v := range vals {
		if len(v) != len(from.Columns) {
			return r, recordstore.Invalidf("row %d has %d values for the %d columns of %s", i+1, len(v), len(from.Columns), from.Name)
		}
		rows[i] = recordstore.Row{}
		for j, c := range from.Columns {
			rows[i][c.Name] = v[j]
		}
	}
	var res recordstore.AppendResult
	if len(rows) == 0 {
		res, err = mb.createEmpty(ctx, e.Stream, e.Kind)
	} else {
		res, err = mb.Append(ctx, e.Stream, e.Kind, rows)
	}
	if err != nil {
		return r, err
	}
	r.Append = &res
	if e.Seal {
		m, err := mb.Seal(ctx, e.Stream)
		if err != nil {
			return r, err
		}
		r.Meta = &m
	}
	return r, nil
}

// readSource reads the announced rows of src and then its end; its errors
// are *sourceFailure.
func readSource(src recordstore.RowSource) ([]recordstore.Values, error) {
	n := src.Len()
	vals := make([]recordstore.Values, 0, n)
	for i := 0; i < n; i++ {
		v, err := src.Next()
		if err == io.EOF {
			return nil, &sourceFailure{recordstore.Invalidf("the row source ended after %d of the %d rows it announced", i, n)}
		}
		if err != nil {
			return nil, &sourceFailure{err}
		}
		vals = append(vals, v)
	}
	switch _, err := src.Next(); {
	case err == io.EOF:
		return vals, nil
	case err == nil:
		return nil, &sourceFailure{recordstore.Invalidf("the row source yields more than the %d rows it announced", n)}
	default:
		return nil, &sourceFailure{err}
	}
}

// createEmpty is an append of no rows: the stream is created when it does
// not exist, and checked as an append checks it otherwise.
func (mb *modelBatches) createEmpty(ctx context.Context, stream, kind string) (recordstore.AppendResult, error) {
	m := mb.model
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return recordstore.AppendResult{}, err
	}
	k, ok := m.mu.kinds[kind]
	if !ok {
		return recordstore.AppendResult{}, recordstore.Errorf(recordstore.ErrNotFound, "kind %s", kind)
	}
	s := m.liveLocked(stream)
	switch {
	case s == nil:
		s = m.createLocked(stream, k, m.now())
		m.notifier.Notify(stream)
	case s.kind != kind:
		return recordstore.AppendResult{}, fmt.Errorf("%w: stream %s holds kind %s, not %s",
			recordstore.ErrSchemaConflict, stream, s.kind, kind)
	case s.sealed:
		return recordstore.AppendResult{}, recordstore.Errorf(recordstore.ErrSealed, "stream %s", stream)
	}
	return recordstore.AppendResult{Stream: stream, Kind: kind, From: s.high + 1, To: s.high}, nil
}

// BatchOutcome returns the ledger's result of id.
func (mb *modelBatches) BatchOutcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	if err := mb.checkOpen(ctx); err != nil {
		return recordstore.BatchResult{}, err
	}
	res, ok := mb.recorded(id)
	if !ok {
		return recordstore.BatchResult{}, recordstore.Errorf(recordstore.ErrNotFound, "batch %s is not in the ledger", id)
	}
	return res, nil
}

// ProducerSeq returns the highest seq of instance in the ledger.
func (mb *modelBatches) ProducerSeq(ctx context.Context, instance string) (int64, error) {
	if err := mb.checkOpen(ctx); err != nil {
		return 0, err
	}
	mb.ledger.Lock()
	defer mb.ledger.Unlock()
	high := int64(0)
	for _, p := range mb.ledger.seqs {
		if p.Instance == instance {
			high = max(high, p.Seq)
		}
	}
	return high, nil
}

// SweepBatches forgets the batches ingested before the given time.
func (mb *modelBatches) SweepBatches(ctx context.Context, before time.Time) (int64, error) {
	if err := mb.checkOpen(ctx); err != nil {
		return 0, err
	}
	mb.ledger.Lock()
	defer mb.ledger.Unlock()
	n := int64(0)
	for id, res := range mb.ledger.rows {
		if res.IngestedAt.Before(before) {
			delete(mb.ledger.rows, id)
			delete(mb.ledger.seqs, id)
			n++
		}
	}
	return n, nil
}
