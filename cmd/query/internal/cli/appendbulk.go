// query append --batch-rows: the input cut into batches of N rows, each
// one all-or-nothing append. Each batch is read as the default append reads
// its input (every line straight to the kind's values, checked as it is
// read, kept in a scratch file: recordstore.RowSpill) and appended by the
// same path (Store.AppendBuffer), so that the memory of a batch does not
// grow with its rows either.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
)

// appendBatches appends the rows of in to st in batches of
// in.p.batchRows rows and prints their windows together.
func appendBatches(ctx context.Context, a *app, st *records.Store, in appendInput, k *recordstore.Kind) error {
	p := in.p
	actx, cancel := p.wait.bound(ctx) // the declaration's wait and the batches'
	defer cancel()
	res, err := bulkAppend(actx, st, in, k)
	if err != nil {
		return err
	}
	if p.waitReplicated {
		if err := st.WaitReplicated(actx); err != nil {
			return &owner.NotReplicatedError{Err: err}
		}
	}
	return a.printOne(bulkAppended{appended: appended{AppendResult: res.AppendResult, Role: role(res.Spooled)}, Batches: res.Batches})
}

// bulkAppend declares the kind of --schema, then reads and appends the
// batches in order, each awaited before the next is read. It stops with
// an *owner.BulkError saying what was applied (its Done):
//
//   - at a bad line: the rows read before it are appended first, as a
//     last, shorter batch;
//   - at a line that takes its batch past the byte limit of one append
//     (ErrCapacity): nothing of that batch is appended;
//   - at a batch refused (a key repeated inside it: ErrInvalid; a sealed
//     stream: ErrSealed), nothing of which is appended;
//   - when ctx ends while the owner has not applied a spooled batch (an
//     *owner.PendingError naming it): that batch is durable in the spool
//     and will be applied, once; Done counts it as unanswered.
//
// Batches of more rows than one append may carry are refused
// (ErrCapacity) before anything is read or declared.
func bulkAppend(ctx context.Context, st *records.Store, in appendInput, k *recordstore.Kind) (owner.BulkAppended, error) {
	p := in.p
	limits := spool.DefaultLimits
	if sp := st.Spool(); sp != nil {
		limits = sp.Limits()
	}
	n := p.batchRows
	if limits.MaxRows > 0 && n > limits.MaxRows {
		return owner.BulkAppended{}, fmt.Errorf("append to %s: %w: batches of %d rows, the limit of one batch is %d", p.stream, spool.ErrTooManyRows, n, limits.MaxRows)
	}
	if in.declared != nil {
		if _, err := st.DeclareKinds(ctx, []recordstore.Kind{*in.declared}, owner.WriteOptions{}); err != nil {
			return owner.BulkAppended{}, err
		}
	}
	b := batches{st: st, stream: p.stream, kind: k, dir: filepath.Dir(st.Paths().Config)}
	b.done.Stream, b.done.Kind = p.stream, k.Name
	rd, sc := newRowReader(in.r, in.name), newValueScanner(k)
	for {
		rows, err := newSpill(b.dir)
		if err != nil {
			return b.stop(err)
		}
		meter, rerr := readBatch(rd, sc, k, limits, n, rows)
		var derr error
		if rows.Len() > 0 && !errors.Is(rerr, recordstore.ErrCapacity) {
			derr = b.deliver(ctx, rows, meter)
		}
		_ = rows.Close() // a scratch file, unlinked already where the system allows
		switch {
		case rerr == io.EOF && derr == nil:
			b.done.Spooled = st.Role() != owner.RoleOwner
			return b.done, nil
		case rerr == io.EOF:
			return b.stop(derr)
		case rerr != nil && derr != nil:
			return b.stop(errors.Join(rerr, derr))
		case rerr != nil:
			return b.stop(rerr)
		case derr != nil:
			return b.stop(derr)
		}
	}
}

// readBatch reads up to n rows of kind from rd into rows, counting them
// against lim (its MaxRows being at least n), as readRows does. It returns
// io.EOF when the input ended (rows holds the last rows, maybe none), and
// an error naming the line of a bad row or of one that takes the batch
// past lim (ErrCapacity).
func readBatch(rd *rowReader, sc *valueScanner, kind *recordstore.Kind, lim spool.Limits, n int64, rows *recordstore.RowSpill) (*spool.Meter, error) {
	meter := spool.NewMeter(kind, lim)
	for meter.Rows() < n {
		vals, line, err := rd.NextValues(sc)
		if errors.Is(err, io.EOF) {
			return meter, io.EOF
		}
		if err != nil {
			return meter, err
		}
		err = meter.Add(vals)
		if err == nil {
			err = rows.Add(vals)
		}
		if err != nil {
			return meter, fmt.Errorf("%s line %d: %w", rd.name, line, err)
		}
	}
	return meter, nil
}

// batches is the state of one bulkAppend.
type batches struct {
	st     *records.Store
	stream string
	kind   *recordstore.Kind
	dir    string // where the scratch files go: the store's folder
	done   owner.BulkAppended
}

// deliver appends rows as one batch and waits for its outcome, adding it
// to done.
func (b *batches) deliver(ctx context.Context, rows *recordstore.RowSpill, meter *spool.Meter) error {
	res, err := b.st.AppendBuffer(ctx, b.stream, b.kind, rows, owner.AppendOptions{Metered: meter})
	var pending *owner.PendingError
	switch {
	case errors.As(err, &pending):
		b.done.UnansweredBatches++
		b.done.UnansweredRows += int64(rows.Len())
		return err
	case errors.Is(err, recordstore.ErrSealed):
		b.done.Batches++ // refused by the owner: an outcome
		return err
	case err != nil:
		return err
	}
	b.done.Batches++
	if b.done.From == 0 {
		b.done.From = res.From
	}
	b.done.To = res.To
	b.done.Appended += res.Appended
	b.done.Skipped += res.Skipped
	b.done.Replaced += res.Replaced
	return nil
}

// stop ends bulkAppend with err and what was done.
func (b *batches) stop(err error) (owner.BulkAppended, error) {
	b.done.Spooled = b.st.Role() != owner.RoleOwner
	return b.done, &owner.BulkError{Err: err, Done: b.done}
}
