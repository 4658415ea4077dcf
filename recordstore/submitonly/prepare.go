// Preparing a write without the catalog: declarations are checked against
// the ones this process made itself, rows against the kind it declared,
// and the rest is left to the store's owner, who has the last word.

package submitonly

import (
	"context"
	"fmt"
	"io"

	"github.com/fb46ecde/records/recordstore"
)

// CheckDeclare checks k as DeclareKind would, without declaring it: k is
// valid and reconciles strictly with the declaration this process made of
// its name, if any; otherwise it is called KindCreated (the owner may
// answer otherwise). Options.CheckKind, when set, is held to first. It
// writes nothing and submits nothing.
func (b *Backend) CheckDeclare(_ context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	if err := b.check(); err != nil {
		return "", err
	}
	if err := k.ValidateStored(); err != nil {
		return "", err
	}
	if b.opts.CheckKind != nil {
		if err := b.opts.CheckKind(k); err != nil {
			return "", err
		}
	}
	status := recordstore.KindCreated
	if held, ok := b.held(k.Name); ok {
		var err error
		if _, status, err = recordstore.Reconcile(held, k, false); err != nil {
			return "", fmt.Errorf("declare kind %s: %w", k.Name, err)
		}
	}
	if status == recordstore.KindUnchanged {
		return status, nil
	}
	return status, k.Validate()
}

// PrepareDeclare checks every kind of kinds as CheckDeclare does and
// returns the batch that declares them all, in order. When one kind is
// refused, the error names it and nothing is returned. The kinds are kept
// by this process only when DeclareKind declares them.
func (b *Backend) PrepareDeclare(ctx context.Context, kinds []recordstore.Kind) (recordstore.Batch, error) {
	return recordstore.DeclareBatch(ctx, kinds, b.CheckDeclare)
}

// PrepareAppend checks an append of rows of kind to stream and returns the
// one batch that carries it: the rows normalized in the column order of
// declare when it is not nil (which the batch then declares ahead of the
// rows), else of the kind this process declared (ErrNotFound otherwise:
// declare it first). Every row must fit, no key repeated among them
// (ErrInvalid, rows counted from 1); whether the stream takes the kind is
// the owner's to say. It submits nothing.
func (b *Backend) PrepareAppend(ctx context.Context, stream, kind string, declare *recordstore.Kind, rows []recordstore.Row) (recordstore.Batch, error) {
	if err := checkAppend(stream, kind, len(rows), declare); err != nil {
		return recordstore.Batch{}, err
	}
	k, err := b.appendKind(ctx, kind, declare)
	if err != nil {
		return recordstore.Batch{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	vals, err := normalizeRows(&k, rows)
	if err != nil {
		return recordstore.Batch{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	return appendBatch(stream, k, declare != nil, vals), nil
}

// PrepareAppendSource is PrepareAppend for the rows of src, stored values
// of kind (as owner.SourceAppender takes them): with declare, kind itself
// is checked as DeclareKind would and declared ahead of the rows; without,
// the rows are remapped into the declaration of kind this process made.
// It reads src to its end and holds the rows in the batch.
func (b *Backend) PrepareAppendSource(ctx context.Context, stream string, kind recordstore.Kind, declare bool, src recordstore.RowSource) (recordstore.Batch, error) {
	n := 0
	if src != nil {
		n = src.Len()
	}
	if err := checkAppend(stream, kind.Name, n, nil); err != nil {
		return recordstore.Batch{}, err
	}
	var with *recordstore.Kind
	if declare {
		with = &kind
	}
	what := "append to " + stream
	k, err := b.appendKind(ctx, kind.Name, with)
	if err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	vals, err := remapSource(&kind, &k, src)
	if err != nil {
		return recordstore.Batch{}, fmt.Errorf("%s: %w", what, err)
	}
	return appendBatch(stream, k, declare, vals), nil
}

// PrepareEntry checks what can be checked of a stream operation (seal,
// reopen, expire, trim, delete) without reading the store — the stream id,
// a positive ttl — and returns the one batch that carries it. Whether the
// stream is live is the owner's to say.
func (b *Backend) PrepareEntry(_ context.Context, e recordstore.BatchEntry) (recordstore.Batch, error) {
	if err := b.check(); err != nil {
		return recordstore.Batch{}, err
	}
	switch e.Op {
	case recordstore.OpSeal, recordstore.OpReopen, recordstore.OpExpire, recordstore.OpTrim, recordstore.OpDelete:
	default:
		return recordstore.Batch{}, recordstore.Invalidf("%s %s: not a stream operation", e.Op, e.Stream)
	}
	if err := recordstore.ValidateStreamID(e.Stream); err != nil {
		return recordstore.Batch{}, err
	}
	if e.Op == recordstore.OpExpire && e.TTL <= 0 {
		return recordstore.Batch{}, recordstore.Invalidf("expire %s: ttl %v must be positive", e.Stream, e.TTL)
	}
	return recordstore.Batch{Entries: []recordstore.BatchEntry{e}}, nil
}

// checkAppend checks what an append is given before its rows are read.
func checkAppend(stream, kind string, rows int, declare *recordstore.Kind) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	if err := recordstore.ValidateKindName(kind); err != nil {
		return err
	}
	if rows == 0 {
		return recordstore.Invalidf("append to %s: no rows", stream)
	}
	if declare != nil && declare.Name != kind {
		return recordstore.Invalidf("append to %s: the declaration is of kind %s, not %s", stream, declare.Name, kind)
	}
	return nil
}

// appendKind is the kind an append's rows are checked against: declare,
// checked as DeclareKind would check it, or the kind this process
// declared (ErrNotFound, wrapping the cause, when it declared none).
func (b *Backend) appendKind(ctx context.Context, kind string, declare *recordstore.Kind) (recordstore.Kind, error) {
	if declare != nil {
		if _, err := b.CheckDeclare(ctx, *declare); err != nil {
			return recordstore.Kind{}, err
		}
		return *declare, nil
	}
	if err := b.check(); err != nil {
		return recordstore.Kind{}, err
	}
	k, ok := b.held(kind)
	if !ok {
		return recordstore.Kind{}, fmt.Errorf("%w: kind %s was not declared in this process, which is detached from the store's catalog (%w): declare it first",
			recordstore.ErrNotFound, kind, b.opts.Cause)
	}
	return k, nil
}

// appendBatch is the batch of an append of vals of k to stream, declaring
// k ahead of the rows when declare is set.
func appendBatch(stream string, k recordstore.Kind, declare bool, vals []recordstore.Values) recordstore.Batch {
	batch := recordstore.Batch{Schemas: []recordstore.Kind{k}}
	if declare {
		batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: k.Name})
	}
	batch.Entries = append(batch.Entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Rows: vals})
	return batch
}

// normalizeRows turns rows into stored values of k, refusing (ErrInvalid)
// a row that does not fit or a key repeated among them.
func normalizeRows(k *recordstore.Kind, rows []recordstore.Row) ([]recordstore.Values, error) {
	keys := newKeySet(k, len(rows))
	vals := make([]recordstore.Values, len(rows))
	for i, row := range rows {
		v, err := k.Normalize(row)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		if err := keys.add(i, v); err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// remapSource reads the rows of src, stored values of from, into the
// column order of to, refusing what normalizeRows refuses and a source
// that yields fewer or more rows than it announced.
func remapSource(from, to *recordstore.Kind, src recordstore.RowSource) ([]recordstore.Values, error) {
	m, err := recordstore.NewRemapper(from, to)
	if err != nil {
		return nil, err
	}
	n := src.Len()
	keys := newKeySet(to, n)
	vals := make([]recordstore.Values, n)
	for i := range vals {
		v, err := src.Next()
		if err == io.EOF {
			return nil, recordstore.Invalidf("the row source ended after %d of the %d rows it announced", i, n)
		}
		if err == nil {
			v, err = m.Remap(v)
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		if err := keys.add(i, v); err != nil {
			return nil, err
		}
		vals[i] = v
	}
	switch _, err := src.Next(); {
	case err == io.EOF:
		return vals, nil
	case err == nil:
		return nil, recordstore.Invalidf("the row source yields more than the %d rows it announced", n)
	default:
		return nil, err
	}
}

// keySet finds a key repeated among the rows of one append, by the kind's
// key identity (recordstore.Kind.AppendRowKey); nil for a kind without a
// key.
type keySet struct {
	k    *recordstore.Kind
	seen map[string]int // key identity to row
	buf  []byte
}

func newKeySet(k *recordstore.Kind, n int) *keySet {
	if len(k.Key) == 0 {
		return nil
	}
	return &keySet{k: k, seen: make(map[string]int, n)}
}

// add records row i's key and refuses (ErrInvalid) a key seen before; the
// message counts rows from 1.
func (s *keySet) add(i int, v recordstore.Values) error {
	if s == nil {
		return nil
	}
	s.buf = s.k.AppendRowKey(s.buf[:0], v)
	if j, dup := s.seen[string(s.buf)]; dup {
		return recordstore.Invalidf("kind %s: rows %d and %d have the same key", s.k.Name, j+1, i+1)
	}
	s.seen[string(s.buf)] = i
	return nil
}

// held returns the declaration of kind this process made, if any.
func (b *Backend) held(kind string) (recordstore.Kind, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.kinds[kind]
	return k, ok
}

// keep records k as declared by this process, merged with what it held
// (added columns: the owner accepted the declaration, so it reconciles).
func (b *Backend) keep(k recordstore.Kind) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if held, ok := b.kinds[k.Name]; ok {
		if merged, _, err := recordstore.Reconcile(held, k, false); err == nil {
			k = merged
		}
	}
	b.kinds[k.Name] = k.Clone()
}
