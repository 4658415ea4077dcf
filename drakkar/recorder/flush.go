// Writing rows: the buffered events (one transaction per flush),
// worker_config and worker_state.

package recorder

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// flushChunk bounds the events of one append: a flush of a fuller buffer
// is several transactions of this many rows.
const flushChunk = 10_000

// Flush writes the buffered events to the live file now, one transaction
// per flushChunk events. A chunk that fails goes back to the front of the
// buffer (and is dropped after max_flush_retries failures in a row); the
// first error is returned. In a process that does not own the worker's
// store the events go through the spool and Flush waits for the owner's
// result.
func (r *Recorder) Flush(ctx context.Context) error {
	if r.st() == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushLocked(ctx)
}

func (r *Recorder) flushLocked(ctx context.Context) error {
	for {
		batch := r.buf.Take(flushChunk)
		if len(batch) == 0 {
			return nil
		}
		start := time.Now()
		err := r.appendEvents(ctx, batch)
		r.met.flushSeconds.Observe(time.Since(start).Seconds())
		if err != nil {
			r.met.flushFailures.Inc()
			r.buf.Requeue(batch)
			r.log.Warn("recorder_flush_failed", "events", len(batch), "code", recordstore.Code(err), "error", err)
			return fmt.Errorf("flush %d events: %w", len(batch), err)
		}
	}
}

// appendEvents appends events to the events stream in one append (see
// writeLocked); the caller holds mu.
func (r *Recorder) appendEvents(ctx context.Context, events []Event) error {
	rows, err := eventRows(events)
	if err != nil {
		return err
	}
	_, err = r.writeLocked(ctx, rows)
	return err
}

// eventRows returns the stored values of events, one row each.
func eventRows(events []Event) (recordstore.ValueRows, error) {
	rows := make(recordstore.ValueRows, len(events))
	for i := range events {
		vals, err := events[i].Values()
		if err != nil {
			return nil, err
		}
		rows[i] = vals
	}
	return rows, nil
}

// appendOptions are the options of an append of kind: a process that does
// not own the worker's store is detached from its catalog, so its appends
// carry the kind's declaration, which the owner checks against its own.
func (r *Recorder) appendOptions(k *recordstore.Kind) owner.AppendOptions {
	if r.Owner() {
		return owner.AppendOptions{}
	}
	return owner.AppendOptions{Declare: k}
}

// writeConfig writes the worker_config row (id 1, redacted) when
// store_config is on.
func (r *Recorder) writeConfig(ctx context.Context) error {
	if !r.cfg.StoreConfig {
		return nil
	}
	info := r.opts.Info
	if info.WorkerName == "" {
		info.WorkerName = r.cfg.WorkerName
	}
	if info.ClusterName == "" {
		info.ClusterName = r.cfg.ClusterName
	}
	row, err := ConfigRow(info, r.now())
	if err != nil {
		return fmt.Errorf("write worker_config: %w", err)
	}
	if err := r.appendRow(ctx, &r.wconf, row); err != nil {
		return fmt.Errorf("write worker_config: %w", err)
	}
	return nil
}

// SyncState writes one worker_state snapshot now (when store_state is
// on; Options.State gives its counters), as the state sync tick does. In
// memory-only mode, and in a process that does not own the worker's
// store, it writes nothing.
func (r *Recorder) SyncState(ctx context.Context) error {
	if !r.Owner() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeState(ctx)
}

// writeState writes one worker_state snapshot when store_state is on; the
// caller holds mu.
func (r *Recorder) writeState(ctx context.Context) error {
	if !r.cfg.StoreState {
		return nil
	}
	var s State
	if r.opts.State != nil {
		s = r.opts.State()
	}
	s.At = r.now()
	s.Uptime = s.At.Sub(r.started)
	vals, err := s.Values()
	if err != nil {
		return fmt.Errorf("write worker_state: %w", err)
	}
	if err := r.appendRow(ctx, &r.state, vals); err != nil {
		return fmt.Errorf("write worker_state: %w", err)
	}
	return nil
}

func (r *Recorder) appendRow(ctx context.Context, k *recordstore.Kind, vals []any) error {
	_, err := r.st().AppendBuffer(ctx, k.Name, k, recordstore.ValueRows{vals}, r.appendOptions(k))
	return err
}

// Written is the outcome of Write.
type Written struct {
	// AppendResult is the window of the events stream the events took
	// (empty when the filters kept none).
	recordstore.AppendResult
	// Filtered counts the events the recording-side filters kept out.
	Filtered int `json:"filtered"`
	// Spooled is set when another process owns the worker's store: the
	// events went to its live file through the spool.
	Spooled bool `json:"spooled"`
}

// Write records events now, in one all-or-nothing append, and returns the
// window they took: the recording-side filters apply, the buffer does
// not. It is for callers that need the result, such as a command that
// records a batch of events; a worker's own events go through Record. In
// memory-only mode it keeps nothing and returns an empty window.
//
// In a process that does not own the worker's store the events go
// through the spool as one batch, and Write waits for its outcome (see
// awaitSpooled): from the owner, else from the ledgers in storage.dir;
// when the owner goes away before the batch is applied, this process
// takes the store over (it opens it again, and becomes its owner unless
// another process was faster) and applies it itself.
//
// On error nothing of events was written, except for two errors: a
// *owner.PendingError (ctx ended first: the batch waits in the spool and
// is applied once, later) and an *OutcomeUnknownError (the batch is
// nowhere to be found: its events may be in a file); do not retry
// either blindly.
func (r *Recorder) Write(ctx context.Context, events []Event) (Written, error) {
	var w Written
	if r.st() == nil {
		return w, nil
	}
	kept := make([]Event, 0, len(events))
	for _, e := range events {
		if r.filter.Admit(&e) {
			kept = append(kept, e)
		}
	}
	w.Filtered = len(events) - len(kept)
	if len(kept) == 0 {
		return w, nil
	}
	rows, err := eventRows(kept)
	if err != nil {
		return Written{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.writeLocked(ctx, rows)
	if err != nil {
		return Written{}, err
	}
	w.AppendResult, w.Spooled = res.AppendResult, res.Spooled
	return w, nil
}
