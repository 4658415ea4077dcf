package owner

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// watchFolder calls arrived, on a goroutine of its own, each time one or
// more entries have been moved into dir (a spool batch's commit rename, a
// retried batch moving back), and after the kernel's event queue
// overflowed (the caller then looks at the whole folder anyway). Calls do
// not overlap: events that come while arrived runs make one more call.
// stop ends the watch and waits for a running call to return.
//
// It uses inotify with IN_MOVED_TO only, so the owner's own moves out of
// the folder and the writes inside batch folders wake nothing. The file
// descriptor is non-blocking and read through the runtime's poller, so a
// waiting watch holds no thread.
func watchFolder(dir string, arrived func()) (stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The events themselves do not matter, only that there were some:
		// the drain lists the folder. A read returns whole events, and a
		// buffer of this size holds many.
		buf := make([]byte, 16<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				return // closed by stop
			}
			arrived()
		}
	}()
	return func() {
		_ = f.Close()
		<-done
	}, nil
}
