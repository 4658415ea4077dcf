// What each step of a child's script does to its store.

package recordstoretest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// do runs step i and returns its result.
func (c *child) do(i int, st Step) (any, error) {
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = DefaultStepTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch st.Op {
	case OpOpen:
		return c.doOpen(ctx, st)
	case OpSleep:
		time.Sleep(st.Duration)
		return nil, nil
	case OpHold:
		return nil, c.doHold(st)
	case OpArm, OpHit:
		return nil, c.doFailpoint(st)
	case OpExit:
		os.Exit(st.Code)
	}
	if !c.isOpen {
		return nil, recordstore.Errorf(recordstore.ErrInvalid, "step %s needs an open store", st.Op)
	}
	return c.doStore(ctx, i, st)
}

// doStore runs the steps that need an open store.
func (c *child) doStore(ctx context.Context, i int, st Step) (any, error) {
	b := c.store.Backend()
	switch st.Op {
	case OpDeclare:
		if st.Schema == nil {
			return nil, recordstore.Errorf(recordstore.ErrInvalid, "declare needs a schema")
		}
		return b.DeclareKind(ctx, *st.Schema)
	case OpAppend:
		return b.Append(ctx, st.Stream, st.Kind, append(st.Rows, st.Gen.Rows()...))
	case OpPublish:
		return c.doPublish(ctx, i, st)
	case OpAwait:
		return c.doAwait(ctx, st)
	case OpWrite:
		return nil, c.doWrite(ctx, st)
	case OpFlush:
		if c.writer == nil {
			return []recordstore.BatchResult{}, nil
		}
		return c.writer.Flush(ctx)
	case OpSeal:
		return b.Seal(ctx, st.Stream)
	case OpDelete:
		return nil, b.Delete(ctx, st.Stream)
	case OpScan:
		return b.Scan(ctx, st.Stream, recordstore.ScanOptions{After: st.After, Limit: st.Limit})
	case OpMeta:
		return b.Meta(ctx, st.Stream)
	case OpTail:
		return c.doTail(ctx, st)
	case OpStatus:
		return c.store.Status(ctx)
	case OpWaitRole:
		return nil, c.doWaitRole(ctx, st)
	case OpClose:
		c.isOpen = false
		return nil, c.store.Close()
	}
	return nil, recordstore.Errorf(recordstore.ErrInvalid, "unknown step op %q", st.Op)
}

func (c *child) doOpen(ctx context.Context, st Step) (any, error) {
	if c.isOpen {
		return nil, recordstore.Errorf(recordstore.ErrInvalid, "the store is open already")
	}
	o := ChildOptions{Failpoint: c.fp.hit, Logger: c.log,
		OnRole: func(r string) { c.event(EventRole, "", r) }}
	if st.Options != nil {
		o.StoreOptions = *st.Options
	}
	if o.BatchEvents {
		o.OnBatch = func(r recordstore.BatchResult) { c.event(EventBatch, "", r) }
	}
	if o.NoFollowRecheck {
		recordstore.FollowRecheck = time.Hour
	}
	s, err := c.open(ctx, c.script.Path, o)
	if err != nil {
		return nil, err
	}
	c.store, c.isOpen = s, true
	return map[string]string{"role": s.Role()}, nil
}

// doPublish builds one batch from the step and publishes it.
func (c *child) doPublish(ctx context.Context, i int, st Step) (any, error) {
	entries := st.Entries
	if len(entries) == 0 {
		entries = []PublishEntry{{Op: recordstore.OpAppend, Stream: st.Stream, Kind: st.Kind,
			Schema: st.Schema, Rows: st.Rows, Gen: st.Gen, Seal: st.Seal}}
	}
	var batch recordstore.Batch
	for _, e := range entries {
		be, err := c.batchEntry(ctx, &batch, e)
		if err != nil {
			return nil, err
		}
		batch.Entries = append(batch.Entries, be)
	}
	id, err := c.store.Publish(ctx, batch)
	if err != nil {
		return nil, err
	}
	c.published = append(c.published, publication{step: i, id: id})
	return map[string]string{"id": id}, nil
}

// batchEntry turns a script entry into a batch entry, adding the schema it
// uses to the batch.
func (c *child) batchEntry(ctx context.Context, batch *recordstore.Batch, e PublishEntry) (recordstore.BatchEntry, error) {
	be := recordstore.BatchEntry{Op: e.Op, Stream: e.Stream, Kind: e.Kind, Seal: e.Seal,
		Generation: e.Generation, TTL: e.TTL}
	if e.Op != recordstore.OpAppend && e.Op != recordstore.OpDeclare {
		return be, nil
	}
	k, err := c.schema(ctx, batch, e)
	if err != nil {
		return be, err
	}
	for _, r := range append(e.Rows, e.Gen.Rows()...) {
		v, err := k.Normalize(r)
		if err != nil {
			return be, err
		}
		be.Rows = append(be.Rows, v)
	}
	return be, nil
}

// schema returns the entry's schema (its own, else the store's), recorded
// once in the batch.
func (c *child) schema(ctx context.Context, batch *recordstore.Batch, e PublishEntry) (*recordstore.Kind, error) {
	if k, ok := batch.Schema(e.Kind); ok {
		if e.Schema != nil && e.Schema.String() != k.String() {
			return nil, recordstore.Errorf(recordstore.ErrInvalid, "two schemas of kind %s in one batch", e.Kind)
		}
		return k, nil
	}
	var k recordstore.Kind
	if e.Schema != nil {
		k = *e.Schema
	} else {
		var err error
		if k, err = c.store.Backend().Kind(ctx, e.Kind); err != nil {
			return nil, fmt.Errorf("schema of kind %s: %w", e.Kind, err)
		}
	}
	if err := k.Validate(); err != nil {
		return nil, err
	}
	batch.Schemas = append(batch.Schemas, k)
	return &batch.Schemas[len(batch.Schemas)-1], nil
}

// doAwait waits for one batch (ID, Ref or RefName) or every publication not awaited
// yet. A batch whose result carries an error fails the step with that
// error; the result is printed all the same.
func (c *child) doAwait(ctx context.Context, st Step) (any, error) {
	if st.ID != "" {
		res, err := c.store.Await(ctx, st.ID)
		if err != nil {
			return nil, err
		}
		return res, res.Err()
	}
	ref := st.Ref
	if st.RefName != "" {
		i, ok := c.script.StepIndex(st.RefName)
		if !ok {
			return nil, recordstore.Errorf(recordstore.ErrInvalid, "the script has no step named %q", st.RefName)
		}
		ref = &i
	}
	if ref != nil {
		for j := range c.published {
			if p := &c.published[j]; p.step == *ref {
				p.awaited = true
				res, err := c.store.Await(ctx, p.id)
				if err != nil {
					return nil, err
				}
				return res, res.Err()
			}
		}
		return nil, recordstore.Errorf(recordstore.ErrInvalid, "step %d published nothing", *ref)
	}
	var out []recordstore.BatchResult
	var firstErr error
	for j := range c.published {
		p := &c.published[j]
		if p.awaited {
			continue
		}
		res, err := c.store.Await(ctx, p.id)
		if err != nil {
			return out, err
		}
		p.awaited = true
		out = append(out, res)
		if firstErr == nil {
			firstErr = res.Err()
		}
	}
	return out, firstErr
}

// errTailDone stops recordstore.Tail once enough rows were seen.
var errTailDone = errors.New("tail: enough rows")

func (c *child) doTail(ctx context.Context, st Step) (any, error) {
	var count int
	var last int64
	err := recordstore.Tail(ctx, c.store.Backend(), st.Stream, st.After, func(r recordstore.Record) error {
		count++
		last = r.Seq
		if st.Count > 0 && count >= st.Count {
			return errTailDone
		}
		return nil
	})
	if errors.Is(err, errTailDone) {
		err = nil
	}
	return map[string]any{"count": count, "lastSeq": last}, err
}

func (c *child) doWaitRole(ctx context.Context, st Step) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if r := c.store.Role(); r == st.Role {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("role is %s, want %s: %w", c.store.Role(), st.Role, ctx.Err())
		case <-t.C:
		}
	}
}

// doHold waits for a release from the parent; only the step's own Timeout
// bounds it.
func (c *child) doHold(st Step) error {
	var deadline <-chan time.Time
	if st.Timeout > 0 {
		t := time.NewTimer(st.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-c.release:
		return nil
	case <-deadline:
		return fmt.Errorf("hold: not released within %s: %w", st.Timeout, context.DeadlineExceeded)
	}
}

func (c *child) doFailpoint(st Step) error {
	if st.Failpoint == nil || st.Failpoint.Name == "" {
		return recordstore.Errorf(recordstore.ErrInvalid, "%s needs a failpoint name", st.Op)
	}
	if st.Op == OpArm {
		return c.fp.arm(*st.Failpoint)
	}
	if st.Failpoint.Action != "" {
		return c.fp.hitWith(*st.Failpoint)
	}
	c.fp.hit(st.Failpoint.Name)
	return nil
}

// doWrite buffers the step's rows in the child's bulk writer.
func (c *child) doWrite(ctx context.Context, st Step) error {
	if c.writer == nil {
		bw, ok := c.store.(BulkWriterStore)
		if !ok {
			return recordstore.Errorf(recordstore.ErrUnsupported, "this store has no bulk writer")
		}
		c.writer = bw.NewBulkWriter(st.BatchRows)
	}
	kind := st.Schema
	if kind == nil {
		k, err := c.store.Backend().Kind(ctx, st.Kind)
		if err != nil {
			return err
		}
		kind = &k
	}
	return c.writer.Append(ctx, st.Stream, kind, append(st.Rows, st.Gen.Rows()...))
}
