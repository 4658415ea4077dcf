// The producer's side of commit notices for its own fast-path appends:
// most notices a producer that appends on the fast path gets announce its
// own commits, whose followers in its process it has woken already (when
// the owner answered). Probing the file for each of them — data_version,
// the epoch, schema_version — cost the producer about as much CPU as the
// append, on the cores the owner needs for the next one. The owner says
// in its answer which notice announces the batch's commit when that
// commit held nothing else (IngestOutcome.Commit); the producer skips the
// probe for a notice that announces nothing but such commits.
//
// The same knowledge spares the producer its check of the stream before
// an append (the stream takes the kind and is not sealed: a read of the
// file right after the owner's commit). An append the owner committed in
// a commit of its own proves the stream took that kind, unsealed, at
// that commit; until a notice announces a commit that was not this
// process's own, nothing else wrote the file (noticeFilter.takes).

package owner

import (
	"sync"
	"sync/atomic"
	"time"
)

// noticeHold is how long a notice that arrives while this process waits
// for the owner's answer to one of its own appends is held for that
// answer (the owner announces a commit before it syncs the WAL and
// answers, so a producer's own commit is usually announced first). A
// notice held longer is acted on.
const noticeHold = 5 * time.Millisecond

// noticeHoldFor is the hold in force: noticeHold, unless a spec set
// another (SetNoticeHold in export_test.go).
var noticeHoldFor atomic.Int64

// holdFor returns the hold in force.
func holdFor() time.Duration {
	if d := noticeHoldFor.Load(); d > 0 {
		return time.Duration(d)
	}
	return noticeHold
}

// noticeOwnMax bounds the own commits remembered ahead of the notices.
const noticeOwnMax = 1024

// noticeFilter decides, for each commit notice of a subscription, whether
// the change feed must probe the file. The zero value is ready and, until
// reset, probes for every notice.
type noticeFilter struct {
	mu sync.Mutex
	// poll starts a probe (changePoller.PollChanges); nil while not
	// subscribed.
	poll func()
	// epoch is the subscription's owner (Response.Epoch); 0: unknown, no
	// notice is skipped.
	epoch int64
	// seen is the notice count up to which every commit was probed for or
	// was this process's own.
	seen uint64
	// own holds the counts of this process's own commits (the owner's
	// answers) above seen.
	own map[uint64]bool
	// inflight counts this process's appends waiting for the owner's
	// answer; held is the highest notice count received meanwhile (0:
	// none), decided when the last answer arrives or after noticeHold.
	inflight int
	held     uint64
	timer    *time.Timer
	// foreign is the highest notice count decided not to be this
	// process's own alone: some commit up to it may be another writer's.
	foreign uint64
	// takes holds, per stream, the kind an append of this process added
	// to it and the count of that append's own commit (see knowsTakes).
	takes map[string]takenStream
}

// takenStream is a stream an own commit appended to: its kind, and the
// commit's notice count.
type takenStream struct {
	kind   string
	commit uint64
}

// streamKind is a stream and the kind an append added to it.
type streamKind struct{ stream, kind string }

// takesMax bounds the streams noticeFilter.takes remembers.
const takesMax = 4096

// reset starts a subscription to the owner of epoch, whose notices poll
// asks for; a nil poll ends it. Notices counted before are forgotten.
func (f *noticeFilter) reset(epoch int64, poll func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.poll, f.epoch, f.seen, f.held, f.foreign = poll, epoch, 0, 0, 0
	clear(f.own)
	clear(f.takes)
	if f.timer != nil {
		f.timer.Stop()
	}
}

// notice takes the notice of commit count n: it probes at once, skips
// the probe when every commit it announces is this process's own, or —
// while an append of this process waits for its answer — holds it.
func (f *noticeFilter) notice(n uint64) {
	f.mu.Lock()
	if f.inflight > 0 && f.epoch != 0 {
		if f.held == 0 { // the hold runs from the first notice held
			if f.timer == nil {
				f.timer = time.AfterFunc(holdFor(), f.release)
			} else {
				f.timer.Reset(holdFor())
			}
		}
		f.held = max(f.held, n)
		f.mu.Unlock()
		return
	}
	poll := f.decideLocked(n)
	f.mu.Unlock()
	if poll != nil {
		poll()
	}
}

// begin counts an append of this process sent to the owner.
func (f *noticeFilter) begin() {
	f.mu.Lock()
	f.inflight++
	f.mu.Unlock()
}

// end counts the owner's answer to an append (or its absence: commit 0):
// commit is the notice count of the batch's own commit under the owner of
// epoch, took the streams the batch appended to (with their kinds) when
// it committed them. A notice held for it is decided when no other
// append waits.
func (f *noticeFilter) end(epoch int64, commit uint64, took []streamKind) {
	f.mu.Lock()
	f.inflight--
	mine := commit != 0 && epoch != 0 && epoch == f.epoch
	if mine && commit > f.seen {
		if f.own == nil {
			f.own = map[uint64]bool{}
		}
		if len(f.own) < noticeOwnMax {
			f.own[commit] = true
		}
	}
	switch {
	case !mine:
		// Not known to hold only this batch's appends (or no answer):
		// it may have sealed a stream or given it to another kind.
		clear(f.takes)
	case commit > f.foreign:
		if f.takes == nil {
			f.takes = map[string]takenStream{}
		}
		for _, t := range took {
			if _, ok := f.takes[t.stream]; ok || len(f.takes) < takesMax {
				f.takes[t.stream] = takenStream{kind: t.kind, commit: commit}
			}
		}
	}
	f.decideHeld(f.inflight == 0)
}

// knowsTakes reports whether stream is known, without reading the file,
// to take an append of kind: an own commit appended kind to it and every
// commit announced since was this process's own (none sealed it or gave
// it to another kind). A commit of another writer whose notice has not
// arrived yet is not known: the owner then refuses the append itself, as
// it does for one that races a check of the file.
func (f *noticeFilter) knowsTakes(stream, kind string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.takes[stream]
	return ok && f.poll != nil && f.epoch != 0 && t.kind == kind && t.commit > f.foreign &&
		(f.held == 0 || f.held <= t.commit)
}

// forgetTakes forgets every stream knowsTakes knows: this process is
// about to change streams otherwise than by appending.
func (f *noticeFilter) forgetTakes() {
	f.mu.Lock()
	clear(f.takes)
	f.mu.Unlock()
}

// release decides a notice held noticeHold without its answer.
func (f *noticeFilter) release() {
	f.mu.Lock()
	f.decideHeld(true)
}

// decideHeld decides the notice held, if any, when now is set; the caller
// holds mu, which it releases (before the probe starts).
func (f *noticeFilter) decideHeld(now bool) {
	var poll func()
	if now && f.held != 0 {
		n := f.held
		f.held = 0
		poll = f.decideLocked(n)
	}
	f.mu.Unlock()
	if poll != nil {
		poll()
	}
}

// decideLocked takes notice count n: it returns the probe to start, or
// nil when every commit in (seen, n] is this process's own (or n is not
// past seen). The caller holds mu and starts the probe after unlocking.
func (f *noticeFilter) decideLocked(n uint64) func() {
	if n <= f.seen {
		return nil
	}
	own := f.epoch != 0
	for c := f.seen + 1; own && c <= n; c++ {
		own = f.own[c]
	}
	for c := range f.own {
		if c <= n {
			delete(f.own, c)
		}
	}
	f.seen = n
	if !own {
		f.foreign = n
	}
	if own || f.poll == nil {
		return nil
	}
	return f.poll
}
