// Writing as a non-owner: publish a batch into the spool, poke the owner,
// and await the batch's outcome — pushed over the socket when the owner
// answers, read from the ledger otherwise.

package owner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// awaitPoll is the ledger polling period when the socket cannot help.
const awaitPoll = 25 * time.Millisecond

// submit is the Submitter this store hands its read-only backend: the
// fast path first (submitFast), unless Options.SpoolOnly or the write's
// WriteOptions.Spool, then the spool (submitSpooled).
func (s *Store[T]) submit(ctx context.Context, b recordstore.Batch) (recordstore.BatchResult, error) {
	if !appendsOnly(&b) {
		// Once it is answered, the next append checks its stream in the
		// file again: the notice of this batch's commit may still be on
		// its way (see noticeFilter.knowsTakes).
		defer s.push.filter.forgetTakes()
	}
	return s.submitVia(ctx, b, !s.fastPathOff() && !spoolOnly(ctx))
}

// appendsOnly reports whether every entry of b is an append.
func appendsOnly(b *recordstore.Batch) bool {
	for _, e := range b.Entries {
		if e.Op != recordstore.OpAppend {
			return false
		}
	}
	return true
}

// TakesHinted is a read-only backend whose append check can skip reading
// the stream from the file when the store knows the stream takes the
// kind (sqlite.Backend). A non-owner's store installs its hint on such a
// backend when it opens it.
type TakesHinted interface {
	// SetTakesHint installs known, which reports that stream is known to
	// take an append of kind (live of that kind, not sealed) without
	// reading the file; nil removes it.
	SetTakesHint(known func(stream, kind string) bool)
}

// hintTakes installs noticeFilter.knowsTakes on b when b takes it.
func (s *Store[T]) hintTakes(b T) {
	if h, ok := any(b).(TakesHinted); ok {
		h.SetTakesHint(s.push.filter.knowsTakes)
	}
}

// fastPathOff reports whether this process's writes skip the fast path
// (Options.SpoolOnly).
func (s *Store[T]) fastPathOff() bool { return s.opts.SpoolOnly }

// submitVia is submit, trying the fast path first when fast is set (see
// submitFast).
func (s *Store[T]) submitVia(ctx context.Context, b recordstore.Batch, fast bool) (recordstore.BatchResult, error) {
	if fast && s.Role() != RoleOwner {
		return s.submitFast(ctx, b)
	}
	return s.submitSpooled(ctx, b, s.publishNotify)
}

// submitSpooled publishes b to the spool with publish (publishNotify, or
// for a stamped batch publishStamped) and awaits its outcome. Awaiting
// pokes the owner itself, so the batch is published without a separate
// poke.
//
// The owner is asked for the outcome as soon as the batch is in incoming/,
// while the publish's last fsyncs (of the folders the rename touched) still
// run: the owner's work overlaps them. The result is returned only once the
// publish has completed, so a caller is never told of a batch whose
// publish failed. Should a power loss undo the rename, the owner's commit
// was not synced either (see flushApplied), and the caller had
// no answer yet.
func (s *Store[T]) submitSpooled(ctx context.Context, b recordstore.Batch,
	publish func(context.Context, recordstore.Batch, func(string)) (string, error)) (recordstore.BatchResult, error) {
	type outcome struct {
		res recordstore.BatchResult
		err error
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan outcome, 1)
	_, err := publish(ctx, b, func(id string) {
		go func() {
			start := time.Now()
			res, err := s.await(actx, id, true)
			s.opts.Metrics.awaited(start, err == nil)
			got <- outcome{res, err}
		}()
	})
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	o := <-got
	return o.res, o.err
}

// Publish writes b into the spool as one batch of this process's producer
// (its ID, Producer and Created are set here), pokes the owner without
// waiting, and returns the batch id. Publishes of one process are
// serialized so that its producer seqs reach incoming/ in order and a
// failed publish leaves no gap. On error nothing was published (an fsync
// error of the commit, wrapping recordstore.ErrFsync, is the exception: the batch
// may be there; the error is fatal for this writer).
func (s *Store[T]) Publish(ctx context.Context, b recordstore.Batch) (string, error) {
	id, err := s.publish(ctx, b)
	if err != nil {
		return "", err
	}
	s.nudge(ctx, id)
	return id, nil
}

// publish is Publish without the poke.
func (s *Store[T]) publish(ctx context.Context, b recordstore.Batch) (string, error) {
	return s.publishNotify(ctx, b, nil)
}

// publishNotify is publish that calls visible with the batch id once the
// batch is in incoming/ (see spool.Dir.PublishNotify).
func (s *Store[T]) publishNotify(ctx context.Context, b recordstore.Batch, visible func(id string)) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", err
	}
	if !appendsOnly(&b) {
		s.push.filter.forgetTakes()
	}
	s.pub.Lock()
	seq := s.pub.seq + 1
	b.ID = spool.NewID()
	b.Created = time.Now().UTC()
	host := s.id.Host
	b.Producer = recordstore.Producer{Instance: s.id.Instance, Seq: seq, PID: s.id.Pid, Host: host, Build: s.opts.Build}
	var notify func(spool.BatchName)
	if visible != nil {
		notify = func(n spool.BatchName) { visible(n.ID) }
	}
	_, err := s.spool.PublishNotify(ctx, &b, s.opts.Format, notify)
	if err == nil || errors.Is(err, fsutil.ErrSync) {
		s.pub.seq = seq
	}
	s.pub.Unlock()
	if err != nil {
		return "", fmt.Errorf("publish batch: %w", err)
	}
	s.opts.Failpoint(FailAfterPublish)
	return b.ID, nil
}

// nudge tells the owner (this process or another) that a batch is waiting.
func (s *Store[T]) nudge(ctx context.Context, id string) {
	if s.Role() == RoleOwner {
		s.wake()
		return
	}
	if sock := s.ownerSocket(); sock != "" {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		if _, err := Call(cctx, sock, Request{Action: ActionIngest, IDs: []string{id}}); err != nil {
			s.forgetSocket(sock)
		}
		cancel()
	}
}

// ownerSocket returns the owner's socket path: the one last read from the
// state file, which is read again once a call to that socket failed
// (forgetSocket).
func (s *Store[T]) ownerSocket() string {
	s.sock.Lock()
	defer s.sock.Unlock()
	if s.sock.path == "" {
		if st, err := ReadState(s.paths.State); err == nil {
			s.sock.path = st.Socket
		}
	}
	return s.sock.path
}

// forgetSocket drops the remembered socket path after a call to it failed.
func (s *Store[T]) forgetSocket(path string) {
	s.sock.Lock()
	if s.sock.path == path {
		s.sock.path = ""
	}
	s.sock.Unlock()
	s.conns.forget(path)
}

// Await waits for the outcome of a published batch: the ledger's result,
// whose Err() (or entry errors) carry the exact sentinel errors. When ctx
// ends first it returns a *PendingError. It works in either role and
// across a promotion of this process: the ledger is the truth.
//
// A batch the ledger no longer holds (its row is swept after
// Options.LedgerRetention) but that still sits in failed/ is answered from
// its error.json. One that neither the ledger nor incoming/ nor failed/
// holds fails at once with an error wrapping recordstore.ErrNotFound: it
// was never published here, or applied so long ago that its ledger row was
// swept. (A process detached from the store cannot read the ledger; it
// asks the owner, which answers the same way.)
func (s *Store[T]) Await(ctx context.Context, id string) (res recordstore.BatchResult, err error) {
	defer func(start time.Time) { s.opts.Metrics.awaited(start, err == nil) }(time.Now())
	if err := s.ready(ctx); err != nil {
		return recordstore.BatchResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return recordstore.BatchResult{}, err // not a pending batch: nothing was looked at
	}
	if !spool.ValidID(id) {
		return recordstore.BatchResult{}, recordstore.Errorf(recordstore.ErrInvalid, "batch id %q", id)
	}
	res, pending, err := s.lookup(ctx, id)
	switch {
	case err == nil && !pending:
		return res, nil
	case errors.Is(err, recordstore.ErrNotFound):
		return recordstore.BatchResult{}, err
	}
	return s.await(ctx, id, true) // lookup has just read the ledger
}

// Outcome returns the outcome of batch id as Await would, without waiting
// for it: a *PendingError (errors.Is ErrPending) while the batch waits in
// incoming/. A process detached from the store cannot read the ledger: it
// gets the backend's error.
func (s *Store[T]) Outcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	if err := s.usable(); err != nil {
		return recordstore.BatchResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return recordstore.BatchResult{}, err
	}
	if !spool.ValidID(id) {
		return recordstore.BatchResult{}, recordstore.Errorf(recordstore.ErrInvalid, "batch id %q", id)
	}
	res, pending, err := s.lookup(ctx, id)
	switch {
	case err != nil:
		return recordstore.BatchResult{}, err
	case pending:
		return recordstore.BatchResult{}, &PendingError{BatchID: id}
	}
	return res, nil
}

// lookup says where batch id is: recorded in the ledger (res); waiting in
// incoming/ (pending); in failed/ with its ledger row swept (res, from its
// error.json; pending when that cannot be read); or nowhere (an error
// wrapping ErrNotFound). The ledger is read again after the folders are
// listed, since an owner records a batch before its folder leaves
// incoming/. A ledger that cannot be read (a detached process) is the
// backend's error.
func (s *Store[T]) lookup(ctx context.Context, id string) (res recordstore.BatchResult, pending bool, err error) {
	recorded := func() (recordstore.BatchResult, bool, error) {
		res, err := s.recordedOutcome(ctx, id)
		if errors.Is(err, recordstore.ErrNotFound) {
			return res, false, nil
		}
		return res, err == nil, err
	}
	if res, ok, err := recorded(); ok || err != nil {
		return res, false, err
	}
	in, err := s.spoolName(ctx, spool.StateIncoming, id)
	if err != nil || in != "" {
		return res, true, err
	}
	failed, err := s.spoolName(ctx, spool.StateFailed, id)
	if err != nil {
		return res, true, err
	}
	if res, ok, err := recorded(); ok || err != nil {
		return res, false, err
	}
	if failed == "" {
		return res, false, fmt.Errorf("batch %s: %w: the ledger does not hold it and it is not in the spool", id, recordstore.ErrNotFound)
	}
	f, err := s.spool.ReadFailure(ctx, failed)
	if err != nil {
		return res, true, nil // put back meanwhile, or error.json unreadable: wait for the ledger
	}
	return recordstore.BatchResult{ID: id, Outcome: recordstore.OutcomeFailed, IngestedAt: f.FailedAt,
		Error: &recordstore.BatchError{Code: f.Code, Message: f.Error}}, false, nil
}

// spoolName returns the name of the folder of state that holds batch id,
// or "".
func (s *Store[T]) spoolName(ctx context.Context, state spool.State, id string) (string, error) {
	names, err := s.spool.List(ctx, state)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if n.ID == id {
			return n.String(), nil
		}
	}
	return "", nil
}

// await is Await; fresh says the ledger was just read (or the batch
// published a moment ago), so the first look at it is left to the owner's
// answer.
func (s *Store[T]) await(ctx context.Context, id string, fresh bool) (recordstore.BatchResult, error) {
	for first := true; ; first = false {
		if err := s.Gone(); err != nil {
			return recordstore.BatchResult{}, err // no owner will ever apply it
		}
		if !(first && fresh) {
			if res, ok, err := s.ledger(ctx, id); ok || err != nil {
				return res, err
			}
		}
		var res recordstore.BatchResult
		var done bool
		if s.Role() == RoleOwner {
			res, done = s.awaitLocal(ctx, id)
		} else {
			var err error
			if res, done, err = s.awaitSocket(ctx, id); err != nil {
				return res, err
			}
		}
		if done {
			return res, nil
		}
		if ctx.Err() != nil {
			return recordstore.BatchResult{}, &PendingError{BatchID: id}
		}
	}
}

// recordedOutcome is the ledger's outcome of batch id, except that a
// failure whose batch was put back into incoming/ for a retry (query
// spool retry) is not its outcome any more: it is then reported as not
// recorded (an error wrapping ErrNotFound) until the retry's outcome
// replaces it.
func (s *Store[T]) recordedOutcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	res, err := s.backend.BatchOutcome(ctx, id)
	if err != nil || res.Outcome != recordstore.OutcomeFailed {
		return res, err
	}
	name, lerr := s.spoolName(ctx, spool.StateIncoming, id)
	if lerr != nil || name == "" {
		return res, nil
	}
	if marked, merr := s.spool.RetryMarked(ctx, spool.StateIncoming, name); merr != nil || !marked {
		return res, nil
	}
	return recordstore.BatchResult{}, fmt.Errorf("batch %s: %w: put back for a retry since its recorded failure", id, recordstore.ErrNotFound)
}

// ledger reads the batch's outcome; ok is false while it is not there.
func (s *Store[T]) ledger(ctx context.Context, id string) (recordstore.BatchResult, bool, error) {
	res, err := s.recordedOutcome(ctx, id)
	switch {
	case err == nil:
		return res, true, nil
	case ctx.Err() != nil:
		return res, false, &PendingError{BatchID: id}
	case errors.Is(err, recordstore.ErrNotFound):
		return res, false, nil
	case errors.Is(err, recordstore.ErrClosed):
		return res, false, err
	default:
		s.log.Debug("await: ledger read failed", "batch", id, "error", err)
		return res, false, nil
	}
}

// awaitLocal waits for this process's own ingest loop to apply id.
func (s *Store[T]) awaitLocal(ctx context.Context, id string) (recordstore.BatchResult, bool) {
	ch, cancel := s.waiters.add(id)
	defer cancel()
	if res, ok, _ := s.ledger(ctx, id); ok {
		return res, true
	}
	s.wake()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case res := <-ch:
		return res, true
	case <-ctx.Done():
	case <-t.C:
	}
	return recordstore.BatchResult{}, false
}

// awaitSocket asks the owner to push id's outcome; when the socket is gone
// it waits awaitPoll, after which the caller reads the ledger again (a
// lookup by primary key on the read-only connection: about as cheap as
// reading the file's data_version, and it answers the question itself).
// An owner that knows the batch nowhere says so: the error then wraps
// ErrNotFound.
func (s *Store[T]) awaitSocket(ctx context.Context, id string) (recordstore.BatchResult, bool, error) {
	if sock := s.ownerSocket(); sock != "" {
		resp, err := Call(ctx, sock, Request{Action: ActionIngest, IDs: []string{id}, Wait: true})
		if err == nil && len(resp.Results) == 1 && resp.Results[0].Done && resp.Results[0].Result != nil {
			return *resp.Results[0].Result, true, nil
		}
		if err == nil && len(resp.Results) == 1 && resp.Results[0].Unknown {
			return recordstore.BatchResult{}, false, fmt.Errorf("batch %s: %w: the owner's ledger does not hold it and it is not in the spool", id, recordstore.ErrNotFound)
		}
		if err == nil {
			return recordstore.BatchResult{}, false, nil // the owner is still working on it; ask again
		}
		if ctx.Err() == nil {
			s.forgetSocket(sock)
		}
	}
	t := time.NewTimer(awaitPoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return recordstore.BatchResult{}, false, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
