package owner

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchFolder calls arrived, on a goroutine of the watch's own, each time
// one or more entries have been moved into dir (a spool batch's commit
// rename, a retried batch moving back), and after the kernel's event
// queue overflowed (the caller then looks at the whole folder anyway).
// Calls do not overlap: arrivals while arrived runs make one more call.
// stop ends the watch and waits for a running call to return.
//
// It uses inotify with IN_MOVED_TO only, so the owner's own moves out of
// the folder and the writes inside batch folders wake nothing. All the
// watches of a process share one inotify instance (hub): Linux allows a
// user 128 instances by default, which a process owning many stores would
// otherwise use up, for itself and for the user's other programs.
func watchFolder(dir string, arrived func()) (stop func(), err error) {
	return hub.watch(dir, arrived)
}

// inotifyHub is a process's inotify instance, open while a watch exists.
// Its reader goroutine hands each event to its watch's goroutine.
type inotifyHub struct {
	mu      sync.Mutex
	f       *os.File             // the instance, read through the runtime's poller; nil when closed
	fd      int                  // f's descriptor
	watches map[int]*folderWatch // by watch descriptor
	// closeFile closes an instance left without watches, on a goroutine
	// of its own (closing tracks it): the kernel waits for a grace period
	// there, several milliseconds, which the owner's Close used to wait
	// for — as long as all the rest of a store's close.
	closeFile func(*os.File) error
	closing   sync.WaitGroup
}

// hub is the process's inotify instance.
var hub = &inotifyHub{closeFile: (*os.File).Close}

func (h *inotifyHub) watch(dir string, arrived func()) (stop func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		if err := h.open(); err != nil {
			return nil, err
		}
	}
	wd, err := unix.InotifyAddWatch(h.fd, dir, unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		h.closeIfIdle()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if _, taken := h.watches[wd]; taken {
		// The same folder twice (inotify gives it the same descriptor),
		// which no store does: leave it to the socket and the polling.
		return nil, fmt.Errorf("watch %s: watched already: %w", dir, errors.ErrUnsupported)
	}
	w := &folderWatch{kick: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	h.watches[wd] = w
	go w.run(arrived)
	return func() {
		h.mu.Lock()
		if h.watches[wd] == w {
			delete(h.watches, wd)
			_, _ = unix.InotifyRmWatch(h.fd, uint32(wd))
			h.closeIfIdle()
		}
		h.mu.Unlock()
		close(w.done)
		<-w.exited
	}, nil
}

// open creates the instance and starts its reader. The caller holds mu.
func (h *inotifyHub) open() error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	h.f, h.fd, h.watches = os.NewFile(uintptr(fd), "inotify"), fd, map[int]*folderWatch{}
	go h.read(h.f)
	return nil
}

// closeIfIdle forgets the instance once it has no watch and closes it in
// the background (its reader then returns): the next watch opens a new
// one. Nothing depends on the close but the instance count of the user,
// which has one more instance for the few milliseconds it takes. The
// caller holds mu.
func (h *inotifyHub) closeIfIdle() {
	if len(h.watches) == 0 && h.f != nil {
		f := h.f
		h.f, h.watches = nil, nil
		h.closing.Add(1)
		go func() {
			defer h.closing.Done()
			_ = h.closeFile(f)
		}()
	}
}

// read hands the events of instance f to their watches until f is closed.
// A read returns whole events; an overflow (watch descriptor -1) goes to
// every watch.
func (h *inotifyHub) read(f *os.File) {
	buf := make([]byte, 16<<10)
	for {
		n, err := f.Read(buf)
		if err != nil {
			return // closed by closeIfIdle
		}
		h.mu.Lock()
		if h.f != f {
			h.mu.Unlock()
			return // closed meanwhile; a new instance has its own reader
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				for _, w := range h.watches {
					w.notify()
				}
			} else if w := h.watches[int(ev.Wd)]; w != nil && ev.Mask&unix.IN_MOVED_TO != 0 {
				w.notify()
			}
		}
		h.mu.Unlock()
	}
}

// folderWatch is one watched folder; kick holds one pending arrival.
type folderWatch struct {
	kick         chan struct{}
	done, exited chan struct{}
}

func (w *folderWatch) run(arrived func()) {
	defer close(w.exited)
	for {
		select {
		case <-w.kick:
			arrived()
		case <-w.done:
			return
		}
	}
}

// notify hands an arrival to w without blocking: one pending is enough.
func (w *folderWatch) notify() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}
