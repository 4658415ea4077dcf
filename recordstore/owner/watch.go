// Watching incoming/: where the platform tells a process that an entry
// was moved into a folder (inotify on Linux), the owner drains as soon as
// a batch's commit rename happens, instead of when its producer's ingest
// request has crossed the socket. The socket and the polling stay: they
// are what wakes the owner where there is no watch, and when a watch
// misses an arrival (an overflow of its queue wakes every watch instead).

package owner

import (
	"context"

	"github.com/fb46ecde/records/recordstore/spool"
)

// startWatch drains whenever a batch arrives in incoming/ (see
// watchFolder), until ctx ends. Where incoming/ cannot be watched it logs
// why at debug level and leaves the waking to the socket and the polling.
func (s *Store[T]) startWatch(ctx context.Context) {
	stop, err := watchFolder(s.spool.Path(spool.StateIncoming, ""), s.drainNow)
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
