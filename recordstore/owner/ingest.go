// The owner's ingest: drain incoming/ oldest first, keep each producer's
// batches in order, apply many batches per transaction (group commit), send
// a batch that can never load to failed/ at once, back off on transient
// errors, and answer waiters the moment their batch commits.

package owner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Group commit bounds: how many batches and rows one transaction takes.
const (
	groupBatches = 256
	groupRows    = 200_000
)

// ingestState is the drain's memory. Guarded by Store.drain.
type ingestState struct {
	policy   RetryPolicy          // Options.Retry
	hw       map[string]int64     // producer instance → highest seq in the ledger
	gapSince map[string]time.Time // batch name → when it was first held back by a gap
	retries  map[string]*retry    // batch name → transient failures so far
	single   bool                 // apply one batch per transaction (a group just failed)
}

type retry struct {
	first    time.Time
	attempts int
	next     time.Time
}

func (st *ingestState) init(p RetryPolicy) {
	st.policy = p
	st.reset()
}

// reset forgets everything; called when this process becomes the owner.
func (st *ingestState) reset() {
	st.hw = map[string]int64{}
	st.gapSince = map[string]time.Time{}
	st.retries = map[string]*retry{}
	st.single = false
}

// due reports whether a batch that failed transiently may be tried again.
func (st *ingestState) due(name string, now time.Time) bool {
	r := st.retries[name]
	return r == nil || !now.Before(r.next)
}

// transient records a transient failure and reports whether the batch has
// now used up its tries.
func (st *ingestState) transient(name string, now time.Time) (exhausted bool) {
	r := st.retries[name]
	if r == nil {
		r = &retry{first: now}
		st.retries[name] = r
	}
	r.attempts++
	delay := st.policy.Min << min(r.attempts-1, 20)
	if delay <= 0 || delay > st.policy.Max {
		delay = st.policy.Max
	}
	r.next = now.Add(delay)
	return r.attempts >= st.policy.Attempts || now.Sub(r.first) >= st.policy.For
}

// attempts returns how many transient failures the batch has had.
func (st *ingestState) attempts(name string) int {
	if r := st.retries[name]; r != nil {
		return r.attempts
	}
	return 0
}

func (st *ingestState) done(name string) {
	delete(st.retries, name)
	delete(st.gapSince, name)
}

// loaded is a batch read from incoming/, ready to apply. Its large
// entries stream from their files (readers), closed once it was applied.
type loaded struct {
	name    spool.BatchName
	batch   recordstore.Batch
	readers []*spool.EntryReader
}

// closeLoaded closes the files of loaded batches.
func closeLoaded(group []loaded) {
	for _, g := range group {
		for _, r := range g.readers {
			_ = r.Close()
		}
	}
}

// ingestLoop drains at start, then whenever poked, polling with a backoff
// from PollMin to PollMax in between. It drains again at once only while
// incoming/ holds more than one drain took; a batch published meanwhile
// has poked it. When it has been idle for a poll period it asks the
// flusher to move applied batches out of incoming/.
func (s *Store[T]) ingestLoop(ctx context.Context) {
	defer s.ownerWG.Done()
	delay := s.opts.PollMin
	for {
		n, more, err := s.drainOnce(ctx)
		if err != nil && ctx.Err() == nil {
			if f := s.fatal(); f != nil {
				s.log.Error("writer stopped: fsync failed; reopen the store", "error", f)
				return
			}
			s.log.Warn("drain", "error", err)
		}
		if n > 0 {
			delay = s.opts.PollMin
			if more {
				continue
			}
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.poke:
			delay = s.opts.PollMin
		case <-t.C:
			s.applied.request() // idle: a good moment for the Sync
			delay = nextPoll(delay, s.opts.PollMax)
		}
		t.Stop()
	}
}

// nextPoll is the ingest loop's next polling period after an idle one of
// delay: twice as long, up to max.
func nextPoll(delay, max time.Duration) time.Duration { return min(2*delay, max) }

// wake pokes the ingest loop without blocking.
func (s *Store[T]) wake() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// drainGate admits one drain at a time, and tells whoever asks (end) when
// the drain running now, or the next one, ends.
type drainGate struct {
	mu    sync.Mutex // held by the running drain
	endMu sync.Mutex
	ended chan struct{} // closed at the next unlock; nil until asked for
}

func (g *drainGate) lock()         { g.mu.Lock() }
func (g *drainGate) tryLock() bool { return g.mu.TryLock() }

// unlock ends a drain: it lets the next in, then wakes who waits on end.
// In that order a woken waiter that finds the gate locked knows that a
// drain started after the one it waited for ended, and that drain lists
// incoming/ afresh. Both happen under endMu, so that end, asked while the
// next drain runs, never hands out the channel of the one that ended.
func (g *drainGate) unlock() {
	g.endMu.Lock()
	defer g.endMu.Unlock()
	ended := g.ended
	g.ended = nil
	g.mu.Unlock()
	if ended != nil {
		close(ended)
	}
}

// end returns a channel closed when the running drain ends, or the next
// one when none runs.
func (g *drainGate) end() <-chan struct{} {
	g.endMu.Lock()
	defer g.endMu.Unlock()
	if g.ended == nil {
		g.ended = make(chan struct{})
	}
	return g.ended
}

// drainNow drains once on the caller's goroutine — the watch of incoming/
// (startWatch) or, where there is none, the control request of a producer
// that waits — when this process serves as owner and no drain is running:
// a lone batch is then applied without waiting for the ingest loop's
// goroutine to be scheduled (about a tenth of a millisecond here).
// Otherwise it pokes the loop.
func (s *Store[T]) drainNow() {
	if !s.drainIfIdle() {
		s.wake()
	}
}

// drainIfIdle is drainNow without the poke when a drain is running (or
// this process does not serve as owner); it reports whether it drained.
// When more is waiting or the drain failed it pokes the loop, which logs
// errors and backs off. The drain runs for the store's life, not for the
// caller's deadline, so that a large group is never cut short only to be
// applied again by the loop.
func (s *Store[T]) drainIfIdle() bool {
	if s.Role() != RoleOwner || !s.drain.tryLock() {
		return false
	}
	_, more, err := s.drainLocked(s.ctx)
	s.drain.unlock()
	if more || err != nil {
		s.wake()
	}
	return true
}

// finalDrain drains until nothing more can be applied or DrainOnClose ends,
// then moves what it applied out of incoming/ (see appliedSet), and
// returns how many batches it applied or failed.
func (s *Store[T]) finalDrain() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.DrainOnClose)
	defer cancel()
	total := 0
	for {
		n, _, err := s.drainOnce(ctx)
		total += n
		if err != nil || n == 0 {
			return total, errors.Join(err, s.flushApplied(ctx))
		}
	}
}

// drainOnce applies one group of incoming batches and returns how many
// batches it applied or failed, and whether incoming/ held more waiting
// batches than that.
func (s *Store[T]) drainOnce(ctx context.Context) (int, bool, error) {
	s.drain.lock()
	defer s.drain.unlock()
	return s.drainLocked(ctx)
}

// drainLocked is drainOnce for a caller that holds the drain gate.
func (s *Store[T]) drainLocked(ctx context.Context) (int, bool, error) {
	if err := s.fatal(); err != nil {
		return 0, false, err
	}
	// The applied set is read before the listing: a folder the flusher
	// moves in between is then either not listed or known as applied.
	applied := s.applied.snapshot()
	names, err := s.spool.List(ctx, spool.StateIncoming)
	if err != nil {
		return 0, false, err
	}
	waiting := 0
	for _, n := range names {
		if !applied[n.ID] {
			waiting++
		}
	}
	s.setBacklog(waiting)
	group, failed, err := s.pickGroup(ctx, names, applied)
	defer closeLoaded(group)
	if err != nil || len(group) == 0 {
		return failed, waiting > failed, err
	}
	n, err := s.commitGroup(ctx, group)
	return n + failed, waiting > n+failed, err
}

// pickGroup loads the next batches to apply, in order, failing at once
// those that can never load and moving to trash/ those this owner already
// committed. The count it returns is of batches failed or moved. Batches
// are chosen and their manifests read one by one, in order; their rows are
// then decoded concurrently (decoding is the costly part), and the results
// are taken in order again.
func (s *Store[T]) pickGroup(ctx context.Context, names []spool.BatchName, applied map[string]bool) ([]loaded, int, error) {
	picked, failed, err := s.pickBatches(ctx, names, applied)
	if err != nil {
		return nil, failed, err
	}
	decoded := s.decodeAll(ctx, picked)
	var group []loaded
	blocked := map[string]bool{} // producers whose earlier batch must be retried first
	for i, p := range picked {
		n, key := p.name, p.name.String()
		if blocked[n.Instance] {
			closeLoaded([]loaded{decoded[i].l})
			continue
		}
		if decoded[i].err == nil {
			group = append(group, decoded[i].l)
			continue
		}
		if ctx.Err() != nil {
			for _, d := range decoded[i+1:] {
				closeLoaded([]loaded{d.l})
			}
			return group, failed, ctx.Err()
		}
		err := decoded[i].err
		if !deterministic(err) && !s.ing.transient(key, time.Now()) {
			s.log.Warn("batch load failed; will retry", "batch", key, "error", err)
			blocked[n.Instance] = true
			continue
		}
		if ferr := s.failBatch(ctx, n, err); ferr != nil {
			return group, failed, ferr
		}
		failed++
	}
	return group, failed, nil
}

// pickedBatch is a batch chosen for the next group, its manifest read.
type pickedBatch struct {
	name  spool.BatchName
	batch *spool.Batch
}

// pickBatches chooses, in order, the batches of the next group and reads
// their manifests, up to groupBatches batches or groupRows rows.
func (s *Store[T]) pickBatches(ctx context.Context, names []spool.BatchName, applied map[string]bool) ([]pickedBatch, int, error) {
	var picked []pickedBatch
	rows, failed := int64(0), 0
	taken := map[string]int64{} // producer → seq taken into this group
	limit := groupBatches
	if s.ing.single {
		limit = 1
	}
	var failedNames map[string]bool // lazily listed
	for _, n := range names {
		if len(picked) >= limit || rows >= groupRows {
			break
		}
		if applied[n.ID] {
			// Committed by this owner; it leaves incoming/ at the next
			// flush (see appliedSet).
			taken[n.Instance] = n.Seq
			continue
		}
		key := n.String()
		now := time.Now()
		if !s.ing.due(key, now) || !s.inOrder(ctx, n, taken, &failedNames) {
			continue
		}
		b, err := s.spool.Load(ctx, spool.StateIncoming, key)
		if err == nil {
			picked = append(picked, pickedBatch{name: n, batch: b})
			taken[n.Instance] = n.Seq
			for _, e := range b.Manifest.Entries {
				rows += e.Rows
			}
			continue
		}
		if ctx.Err() != nil {
			// The drain was cancelled (the owner is closing), not the
			// batch at fault: recording a transient failure would hold it
			// back from the final drain by the retry backoff.
			return picked, failed, ctx.Err()
		}
		if !deterministic(err) && !s.ing.transient(key, now) {
			s.log.Warn("batch load failed; will retry", "batch", key, "error", err)
			continue
		}
		if ferr := s.failBatch(ctx, n, err); ferr != nil {
			return picked, failed, ferr
		}
		taken[n.Instance] = n.Seq
		failed++
	}
	return picked, failed, nil
}

type decodeResult struct {
	l   loaded
	err error
}

// decodeAll reads and checks the rows of every picked batch, as many at a
// time as there are processors.
func (s *Store[T]) decodeAll(ctx context.Context, picked []pickedBatch) []decodeResult {
	out := make([]decodeResult, len(picked))
	if len(picked) == 1 {
		out[0].l, out[0].err = decode(ctx, picked[0])
		return out
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range picked {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].l, out[i].err = decode(ctx, p)
		}()
	}
	wg.Wait()
	return out
}

// streamMin is the smallest append entry that streams from its file while
// the backend inserts (recordstore.RowSource), so that decoding it
// overlaps the inserts. Smaller entries are read in full beforehand, where
// a group's many small batches decode concurrently.
const streamMin = 4096

// decode checks one picked batch's files and reads the rows of its small
// entries; its large ones are opened to stream (see streamMin). A row that
// does not fit in a streamed entry fails the batch when the backend
// reaches it (commitGroup sends it to failed/ then).
func decode(ctx context.Context, p pickedBatch) (loaded, error) {
	m := p.batch.Manifest
	d := &spool.Delivery{ID: m.ID, Producer: m.Producer, Created: m.Created, Schemas: m.Schemas,
		Entries: make([]spool.DeliveryEntry, len(m.Entries))}
	l := loaded{name: p.name}
	sources := map[int]recordstore.RowSource{}
	for i, e := range m.Entries {
		d.Entries[i].Entry = e
		if e.Op != spool.OpAppend {
			continue
		}
		r, err := p.batch.Open(ctx, i)
		if err != nil {
			closeLoaded([]loaded{l})
			return loaded{}, err
		}
		if e.Rows >= streamMin {
			l.readers = append(l.readers, r)
			sources[i] = entrySource{r}
			continue
		}
		d.Entries[i].Values, err = r.ReadAll()
		if err != nil {
			closeLoaded([]loaded{l})
			return loaded{}, err
		}
	}
	l.batch = toBatch(d)
	l.batch.Retry = p.batch.Retried
	for i, src := range sources {
		l.batch.Entries[i].Source = src
	}
	return l, nil
}

// entrySource is a spool entry reader as a row source.
type entrySource struct{ *spool.EntryReader }

func (s entrySource) Len() int { return int(s.Entry().Rows) }

// inOrder reports whether n may be applied now: its producer is new to the
// ledger, or n is the next seq after the producer's high-water mark, or the
// gap before it was waited out (GapWait) or its predecessor is in failed/.
func (s *Store[T]) inOrder(ctx context.Context, n spool.BatchName, taken map[string]int64, failedNames *map[string]bool) bool {
	prev, ok := taken[n.Instance]
	if !ok {
		prev = s.highWater(ctx, n.Instance)
	}
	key := n.String()
	if prev == 0 || n.Seq <= prev+1 {
		delete(s.ing.gapSince, key)
		return true
	}
	first, ok := s.ing.gapSince[key]
	if !ok {
		first = time.Now()
		s.ing.gapSince[key] = first
	}
	if time.Since(first) >= s.opts.GapWait {
		s.log.Error("producer gap waited out; applying out of order", "batch", key, "after_seq", prev)
		return true
	}
	if *failedNames == nil {
		*failedNames = map[string]bool{}
		if fl, err := s.spool.List(ctx, spool.StateFailed); err == nil {
			for _, f := range fl {
				(*failedNames)[f.Instance+"/"+itoa(f.Seq)] = true
			}
		}
	}
	return (*failedNames)[n.Instance+"/"+itoa(n.Seq-1)]
}

// highWater returns the producer's highest seq in the ledger (cached).
func (s *Store[T]) highWater(ctx context.Context, instance string) int64 {
	if hw, ok := s.ing.hw[instance]; ok {
		return hw
	}
	hw, err := s.backend.ProducerSeq(ctx, instance)
	if err != nil {
		return 0
	}
	s.ing.hw[instance] = hw
	return hw
}

func (s *Store[T]) raiseHighWater(instance string, seq int64) {
	if seq > s.ing.hw[instance] {
		s.ing.hw[instance] = seq
	}
}

// deterministic reports whether a load error will recur on every try (the
// batch itself is bad) rather than being an I/O hiccup.
func deterministic(err error) bool {
	return recordstore.Code(err) != recordstore.CodeInternal
}

// commitGroup applies a group in one transaction and answers its waiters;
// its folders stay in incoming/ until the next flush (appliedSet), those of
// batches a streamed bad row failed go to failed/.
func (s *Store[T]) commitGroup(ctx context.Context, group []loaded) (int, error) {
	batches := make([]recordstore.Batch, len(group))
	for i, g := range group {
		batches[i] = g.batch
	}
	results, err := s.backend.AppendBatch(ctx, batches...)
	if err != nil {
		s.setLastError(err)
		if ctx.Err() == nil && !errors.Is(err, recordstore.ErrClosed) && s.fatal() == nil {
			s.ing.single = len(group) > 1
			now := time.Now()
			for _, g := range group {
				exhausted := s.ing.transient(g.name.String(), now)
				if exhausted && len(group) == 1 {
					// It failed alone, as often or as long as the retry
					// policy allows: it is failed, if the ledger can say so.
					cause := fmt.Errorf("gave up after %d tries: %w", s.ing.attempts(g.name.String()), err)
					if ferr := s.failBatch(ctx, g.name, cause); ferr != nil {
						return 0, errors.Join(err, ferr)
					}
					return 1, nil
				}
			}
		}
		return 0, err
	}
	s.ing.single = false
	var bad map[int]bool // batches whose streamed rows failed them
	for i, res := range results {
		g := group[i]
		s.ing.done(g.name.String())
		s.raiseHighWater(g.name.Instance, g.name.Seq)
		if res.Outcome == recordstore.OutcomeFailed {
			if bad == nil {
				bad = map[int]bool{}
			}
			bad[i] = true
			continue // announced once in failed/
		}
		s.applied.add(g.name)
		s.announce(res)
	}
	s.opts.Failpoint(FailAfterLedger)
	for i, g := range group {
		if bad[i] {
			if err := s.moveFailed(ctx, g.name, results[i].Error, results); err != nil {
				return len(group), err
			}
		}
	}
	return len(group), nil
}

// failBatch records a batch that cannot be applied as failed in the ledger
// (so waiters fail at once and its producer's successors are not held
// back), then moves it to failed/ with error.json.
func (s *Store[T]) failBatch(ctx context.Context, n spool.BatchName, cause error) error {
	key := n.String()
	b := recordstore.Batch{ID: n.ID, Created: n.Created,
		Producer: recordstore.Producer{Instance: n.Instance, Seq: n.Seq},
		Failure:  recordstore.AsBatchError(cause)}
	// A batch put back after a failure that fails again replaces the
	// ledger's record of the first failure; unmarked, the first record
	// stands (this is then a replay of a failure already recorded).
	if marked, err := s.spool.RetryMarked(ctx, spool.StateIncoming, key); err == nil {
		b.Retry = marked
	}
	results, err := s.backend.AppendBatch(ctx, b)
	if err != nil {
		s.setLastError(err)
		return err
	}
	s.ing.done(key)
	s.raiseHighWater(n.Instance, n.Seq)
	return s.moveFailed(ctx, n, cause, results)
}

// moveFailed moves a batch the ledger records as failed to failed/ with
// error.json, counts it and answers its waiters (results holds its result).
func (s *Store[T]) moveFailed(ctx context.Context, n spool.BatchName, cause error, results []recordstore.BatchResult) error {
	key := n.String()
	if err := s.spool.MoveToFailed(ctx, key, cause); err != nil {
		s.setLastError(err)
		return err
	}
	s.log.Warn("batch failed", "batch", key, "error", cause)
	s.mu.Lock()
	s.mu.failed++
	s.mu.lastErr = key + ": " + cause.Error()
	s.mu.Unlock()
	for _, res := range results {
		if res.ID == n.ID {
			s.announce(res)
		}
	}
	return nil
}

// announce answers the waiters of a batch and reports it.
func (s *Store[T]) announce(res recordstore.BatchResult) {
	s.waiters.resolve(res)
	if s.opts.Events.Batch != nil {
		s.opts.Events.Batch(res)
	}
}

// moveStrays moves entries of incoming/ that are not batch names to
// failed/, so they are seen rather than silently ignored.
func (s *Store[T]) moveStrays(ctx context.Context) {
	strays, err := s.spool.Strays(ctx, spool.StateIncoming)
	if err != nil {
		return
	}
	for _, name := range strays {
		if err := s.spool.MoveToFailed(ctx, name, errors.New("not a batch name")); err != nil {
			s.log.Warn("move stray", "entry", name, "error", err)
			continue
		}
		s.log.Warn("moved an entry of incoming/ that is not a batch to failed/", "entry", name)
	}
}

func (s *Store[T]) setBacklog(n int) {
	s.mu.Lock()
	s.mu.backlog = n
	s.mu.Unlock()
}
