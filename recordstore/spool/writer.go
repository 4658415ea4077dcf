// The bulk Writer: buffers appends and stream operations of one producer,
// cuts them into batches at the caps and delivers them in order through a
// Sink (by default: publishing into the spool).

package spool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// Default batch caps of a Writer.
const (
	DefaultMaxBatchRows    = 50_000
	DefaultMaxBatchBytes   = 64 << 20
	DefaultMaxBatchEntries = 10_000
)

// WriterOptions configure a Writer. The zero value is ready to use.
type WriterOptions struct {
	// Identity is the producer; nil means ProcessIdentity().
	Identity *Identity
	// MaxRows, MaxBytes and MaxEntries are the caps at which a batch is
	// cut (0 = DefaultMaxBatchRows, DefaultMaxBatchBytes,
	// DefaultMaxBatchEntries). Bytes are estimated from the values, close
	// to their ndjson size. A single Append larger than the caps is still
	// one batch.
	MaxRows    int64
	MaxBytes   int64
	MaxEntries int
	// Limits are what one batch may hold once published (a Dir's
	// Limits; zero fields: no limit). The caps above are lowered to them,
	// and an Append whose rows alone pass them — more than MaxRows rows,
	// more than MaxBytes bytes as NDJSON lines — is refused with
	// ErrTooManyRows or ErrTooLarge (ErrCapacity), nothing buffered,
	// whatever the sink: a batch holding it could not be published.
	// Dir.NewWriter sets them to the Dir's Limits when left zero.
	Limits Limits
	// Now is the clock stamping batches; nil means time.Now.
	Now func() time.Time
	// OnDeliver, when set, is called after each successful delivery (the
	// owner package awaits the ids it sees here).
	OnDeliver func(b *recordstore.Batch)
}

// Writer buffers the writes of one producer and delivers them as batches.
// Each Append is one entry of one batch (never split), so it is applied
// atomically; consecutive Appends to the same stream may share an entry
// when that cannot change their outcome. Batches are delivered in the
// order they were cut; a batch whose delivery failed is delivered again,
// with the same id and seq, before anything later.
//
// A Writer is safe for concurrent use. Writes are buffered in memory until
// a batch is full or Flush is called: what was not delivered when the
// process dies is lost, and Flush reports whether it was.
type Writer struct {
	sink Sink
	id   *Identity
	opts WriterOptions

	mu struct {
		sync.Mutex
		schemas map[string]*recordstore.Kind // validated declarations by name
		cur     pendingBatch                 // the batch being filled
		queue   []*recordstore.Batch         // cut, not yet delivered, oldest first
		err     error                        // fatal (an fsync failure): every call returns it
		closed  bool
	}
}

// pendingBatch is the batch a Writer is filling.
type pendingBatch struct {
	entries []recordstore.BatchEntry
	rows    int64
	bytes   int64
	keys    map[string]struct{} // key values of the last entry, when its kind has a key
}

// NewWriter returns a Writer delivering into sink.
func NewWriter(sink Sink, opts WriterOptions) *Writer {
	if opts.Identity == nil {
		opts.Identity = ProcessIdentity()
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxBatchRows
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBatchBytes
	}
	if l := opts.Limits.MaxRows; l > 0 && opts.MaxRows > l {
		opts.MaxRows = l
	}
	if l := opts.Limits.MaxBytes; l > 0 && opts.MaxBytes > l {
		opts.MaxBytes = l // the estimate bounds the exact size from above
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxBatchEntries
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	w := &Writer{sink: sink, id: opts.Identity, opts: opts}
	w.mu.schemas = map[string]*recordstore.Kind{}
	return w
}

// NewWriter returns a Writer publishing into d with the codec named
// format.
func (d *Dir) NewWriter(format string, opts WriterOptions) (*Writer, error) {
	sink, err := d.Sink(format)
	if err != nil {
		return nil, err
	}
	if opts.Limits == (Limits{}) {
		opts.Limits = d.limits
	}
	return NewWriter(sink, opts), nil
}

// Append buffers rows of kind for stream (zero rows make a zero-row entry,
// which creates the stream). The rows are normalized now: a row that does
// not fit, a key repeated inside rows, or a kind declared differently
// earlier on this Writer is refused (ErrInvalid, ErrSchemaConflict) and
// nothing is buffered. When the current batch is full it is cut and the
// batches waiting before this one are delivered first; if that delivery
// fails, Append returns its error and this call's rows are not buffered.
func (w *Writer) Append(ctx context.Context, stream string, kind *recordstore.Kind, rows []recordstore.Row) error {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return err
	}
	k, err := validKind(kind)
	if err != nil {
		return err
	}
	vals, keys, size, err := normalizeRows(k, rows)
	if err != nil {
		return err
	}
	if err := w.checkLimits(stream, k, vals, size); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if err := w.declareLocked(k); err != nil {
		return err
	}
	cur := &w.mu.cur
	if len(cur.entries) > 0 && (cur.rows+int64(len(vals)) > w.opts.MaxRows || cur.bytes+size > w.opts.MaxBytes) {
		w.cutLocked()
	}
	if err := w.makeRoomLocked(ctx); err != nil {
		return err
	}
	w.addAppendLocked(stream, k, vals, keys, size)
	return nil
}

// checkLimits refuses an append that no batch could carry (see
// WriterOptions.Limits). size, the estimate of its NDJSON size, bounds the
// exact one from above: only an append whose estimate passes the byte
// limit is measured exactly.
func (w *Writer) checkLimits(stream string, k *recordstore.Kind, vals []recordstore.Values, size int64) error {
	lim := w.opts.Limits
	if lim.MaxRows > 0 && int64(len(vals)) > lim.MaxRows {
		return fmt.Errorf("append to %s: %w: %d rows, the limit of one batch is %d", stream, ErrTooManyRows, len(vals), lim.MaxRows)
	}
	if lim.MaxBytes <= 0 || size <= lim.MaxBytes {
		return nil
	}
	m := NewMeter(k, Limits{MaxBytes: lim.MaxBytes})
	for i, v := range vals {
		if err := m.Add(v); err != nil {
			return fmt.Errorf("append to %s: row %d: %w", stream, i+1, err)
		}
	}
	return nil
}

// Seal buffers a seal of stream (see Append for delivery and errors).
func (w *Writer) Seal(ctx context.Context, stream string) error {
	return w.op(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: stream})
}

// Reopen buffers an unseal of stream, fenced by generation (>= 1).
func (w *Writer) Reopen(ctx context.Context, stream string, generation int64) error {
	if generation < 1 {
		return recordstore.Invalidf("reopen %s: generation must be >= 1", stream)
	}
	return w.op(ctx, recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: stream, Generation: generation})
}

// Expire buffers an expiry of stream ttl after the owner ingests it.
func (w *Writer) Expire(ctx context.Context, stream string, ttl time.Duration) error {
	if ttl <= 0 {
		return recordstore.Invalidf("expire %s: ttl must be positive", stream)
	}
	return w.op(ctx, recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: stream, TTL: ttl})
}

// Trim buffers a trim of the rows of stream appended before before.
func (w *Writer) Trim(ctx context.Context, stream string, before time.Time) error {
	return w.op(ctx, recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: stream, Before: before.UTC()})
}

// Delete buffers a delete of stream.
func (w *Writer) Delete(ctx context.Context, stream string) error {
	return w.op(ctx, recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: stream})
}

func (w *Writer) op(ctx context.Context, e recordstore.BatchEntry) error {
	if err := recordstore.ValidateStreamID(e.Stream); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if err := w.makeRoomLocked(ctx); err != nil {
		return err
	}
	cur := &w.mu.cur
	cur.entries = append(cur.entries, e)
	cur.keys = nil
	w.cutIfFullLocked()
	return nil
}

// Flush cuts the current batch and delivers every batch not yet
// delivered, in order. On error the undelivered batches stay queued and
// the next call (Flush or any write) delivers them first.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.err != nil {
		return w.mu.err
	}
	if len(w.mu.cur.entries) > 0 {
		w.cutLocked()
	}
	return w.deliverLocked(ctx)
}

// Close flushes and makes the Writer refuse further writes
// (recordstore.ErrClosed). When the flush fails the Writer stays open so
// that the caller may retry Close.
func (w *Writer) Close(ctx context.Context) error {
	if err := w.Flush(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	w.mu.closed = true
	w.mu.Unlock()
	return nil
}

// Pending returns the rows and entries buffered or queued, not yet
// delivered.
func (w *Writer) Pending() (rows int64, entries int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rows, entries = w.mu.cur.rows, len(w.mu.cur.entries)
	for _, d := range w.mu.queue {
		rows += d.Rows()
		entries += len(d.Entries)
	}
	return rows, entries
}

func (w *Writer) usableLocked() error {
	if w.mu.err != nil {
		return w.mu.err
	}
	if w.mu.closed {
		return fmt.Errorf("spool writer: %w", recordstore.ErrClosed)
	}
	return nil
}

// declareLocked records k under its name, refusing a different
// declaration of the same name.
func (w *Writer) declareLocked(k *recordstore.Kind) error {
	have, ok := w.mu.schemas[k.Name]
	if !ok {
		w.mu.schemas[k.Name] = k
		return nil
	}
	if have.String() != k.String() {
		return recordstore.Errorf(recordstore.ErrSchemaConflict, "kind %s is declared differently earlier on this writer", k.Name)
	}
	return nil
}

// makeRoomLocked delivers the queued batches, so that new writes are
// only buffered behind a delivered past.
func (w *Writer) makeRoomLocked(ctx context.Context) error {
	if len(w.mu.queue) == 0 {
		return nil
	}
	return w.deliverLocked(ctx)
}

func (w *Writer) addAppendLocked(stream string, k *recordstore.Kind, vals []recordstore.Values, keys []string, size int64) {
	cur := &w.mu.cur
	if n := len(cur.entries); n > 0 && w.mergeableLocked(&cur.entries[n-1], stream, k, keys) {
		last := &cur.entries[n-1]
		last.Rows = append(last.Rows, vals...)
	} else {
		cur.entries = append(cur.entries, recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Rows: vals})
		cur.keys = nil
		if len(k.Key) > 0 {
			cur.keys = map[string]struct{}{}
		}
	}
	for _, key := range keys {
		cur.keys[key] = struct{}{}
	}
	cur.rows += int64(len(vals))
	cur.bytes += size
	w.cutIfFullLocked()
}

// mergeableLocked reports whether rows with keys may join entry e without
// changing the outcome: same stream and kind, and no key in common.
func (w *Writer) mergeableLocked(e *recordstore.BatchEntry, stream string, k *recordstore.Kind, keys []string) bool {
	if e.Op != recordstore.OpAppend || e.Stream != stream || e.Kind != k.Name || e.Seal || e.Generation != 0 {
		return false
	}
	for _, key := range keys {
		if _, dup := w.mu.cur.keys[key]; dup {
			return false
		}
	}
	return true
}

func (w *Writer) cutIfFullLocked() {
	cur := &w.mu.cur
	if cur.rows >= w.opts.MaxRows || cur.bytes >= w.opts.MaxBytes || len(cur.entries) >= w.opts.MaxEntries {
		w.cutLocked()
	}
}

// cutLocked turns the current batch into a recordstore.Batch with a new id
// and the identity's next seq, and queues it.
func (w *Writer) cutLocked() {
	cur := w.mu.cur
	d := &recordstore.Batch{ID: NewID(), Producer: w.id.Producer(w.id.Next()), Created: w.opts.Now().UTC(), Entries: cur.entries}
	seen := map[string]bool{}
	for _, e := range cur.entries {
		if e.Op == recordstore.OpAppend && !seen[e.Kind] {
			seen[e.Kind] = true
			d.Schemas = append(d.Schemas, *w.mu.schemas[e.Kind])
		}
	}
	w.mu.queue = append(w.mu.queue, d)
	w.mu.cur = pendingBatch{}
}

// deliverLocked delivers the queue in order, stopping at the first error.
// An fsync failure poisons the Writer (see fsutil: retrying after a
// failed fsync can report success for lost data).
func (w *Writer) deliverLocked(ctx context.Context) error {
	for len(w.mu.queue) > 0 {
		d := w.mu.queue[0]
		if err := w.sink.Deliver(ctx, d); err != nil {
			err = fmt.Errorf("deliver batch %s: %w", NameOf(d), err)
			if errors.Is(err, fsutil.ErrSync) {
				w.mu.err = fmt.Errorf("spool writer stopped: %w", err)
			}
			return err
		}
		w.mu.queue[0] = nil
		w.mu.queue = w.mu.queue[1:]
		if w.opts.OnDeliver != nil {
			w.opts.OnDeliver(d)
		}
	}
	return nil
}

// validKind returns a validated copy of kind.
func validKind(kind *recordstore.Kind) (*recordstore.Kind, error) {
	if kind == nil {
		return nil, recordstore.Invalidf("spool writer: nil kind")
	}
	k := *kind
	k.Columns = slices.Clone(kind.Columns)
	k.Key = slices.Clone(kind.Key)
	// As a manifest's schemas are: the owner holds a new declaration to
	// every rule (recordstore.Kind.Validate).
	if err := k.ValidateStored(); err != nil {
		return nil, err
	}
	return &k, nil
}

// normalizeRows normalizes rows, refusing strings that are not UTF-8 and
// keys repeated inside rows. It returns the values, the key text of each
// row (keyed kinds) and the estimated encoded size.
func normalizeRows(k *recordstore.Kind, rows []recordstore.Row) ([]recordstore.Values, []string, int64, error) {
	vals := make([]recordstore.Values, len(rows))
	var keys []string
	var seen map[string]int
	var buf []byte
	if len(k.Key) > 0 {
		keys = make([]string, len(rows))
		seen = make(map[string]int, len(rows))
	}
	var size int64
	for i, r := range rows {
		v, err := Normalize(k, r)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("row %d: %w", i+1, err)
		}
		n, err := rowSize(k, v)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("row %d: %w", i+1, err)
		}
		size += n
		vals[i] = v
		if keys != nil {
			buf = k.AppendRowKey(buf[:0], v)
			if j, dup := seen[string(buf)]; dup {
				return nil, nil, 0, recordstore.Invalidf("kind %s: rows %d and %d have the same key", k.Name, j+1, i+1)
			}
			keys[i] = string(buf)
			seen[keys[i]] = i
		}
	}
	return vals, keys, size, nil
}

// rowSize estimates the ndjson size of one row (estimateRow) and checks
// that its string values are UTF-8 (which every codec needs).
func rowSize(k *recordstore.Kind, v recordstore.Values) (int64, error) {
	for i, x := range v {
		if t, ok := x.(string); ok && k.Columns[i].Type == recordstore.TypeString && !utf8.ValidString(t) {
			return 0, recordstore.Invalidf("kind %s: column %s: string is not valid UTF-8", k.Name, k.Columns[i].Name)
		}
	}
	return estimateRow(k, v), nil
}

// estimateRow bounds the ndjson size of one row from above, counting
// every number at its widest.
func estimateRow(k *recordstore.Kind, v recordstore.Values) int64 {
	n := int64(3)
	for i, x := range v {
		if x == nil {
			continue
		}
		n += int64(len(k.Columns[i].Name)) + 4
		switch t := x.(type) {
		case string:
			n += int64(len(t)) + 2
		case int64:
			n += 20
		case float64:
			n += 24
		}
	}
	return n
}
