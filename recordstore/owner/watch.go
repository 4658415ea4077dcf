// Watching incoming/: where the platform tells a process that an entry
// was moved into a folder (inotify on Linux), the owner drains as soon as
// a batch's commit rename happens, instead of when its producer's ingest
// request has crossed the socket. The socket and the polling stay: they
// are what wakes the owner where there is no watch, and when a watch
// misses an arrival (an overflow of its queue wakes every watch instead).

package owner

import (
	"context"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// startWatch drains whenever a batch arrives in incoming/ (see
// watchFolder), until ctx ends. Where incoming/ cannot be watched it logs
// why at debug level and leaves the waking to the socket and the polling.
func (s *Store[T]) startWatch(ctx context.Context) {
	s.arrivals.Add(1) // what an earlier tenure listed says nothing now
	stop, err := watchFolder(s.spool.Path(spool.StateIncoming, ""), func() {
		s.arrivals.Add(1)
		s.drainNow()
	})
	if err != nil {
		s.log.Debug("incoming/ is not watched; the socket and polling wake the owner", "error", err)
		return
	}
	s.watching.Store(true)
	s.ownerWG.Add(1)
	go func() {
		defer s.ownerWG.Done()
		<-ctx.Done()
		s.watching.Store(false)
		stop()
	}()
}

// quietFor bounds how long a drain trusts the watch alone: a drain lists
// incoming/ when the last listing is older, whatever the watch says, so
// that a batch that entered the folder without a rename (a tool writing
// in place) is not left there for long.
const quietFor = time.Second

// quietSpool is what the last listing of incoming/ found: ok when nothing
// in it was waiting, the watch's arrival count before it (gen) and when
// it started (at).
type quietSpool struct {
	ok  bool
	gen uint64
	at  time.Time
}

// spoolQuiet reports whether a drain may skip listing incoming/: it is
// watched, the last listing (less than quietFor ago) found nothing
// waiting, and no batch arrived since it began (gen, the arrival count
// now, is the one it read). The fast path's drains then cost no listing;
// the first arrival, the watch's overflow, an ingest request (a producer
// published: see controlIngest) or a new tenure (startWatch) bring the
// listing back.
func (s *Store[T]) spoolQuiet(gen uint64) bool {
	q := s.quiet
	return s.watching.Load() && q.ok && q.gen == gen && time.Since(q.at) < quietFor
}
