// Push: the owner tells the other processes of a store that it committed,
// over a long-lived connection to its control socket (the subscribe
// action), so that their followers (recordstore.Tail and Wait, query
// serve's SSE, scan --follow) wake at once instead of at the next poll of
// the SQLite change feed. The push only makes things fast: every
// non-owner keeps polling its change feed as before, and a process with no
// subscription (no owner, an owner of an older build, a lost connection)
// is woken by the polling alone. Status says which ("push", "polling").
//
// A notice never delays a commit: the writer only closes a channel (see
// pushHub.committed); each subscriber's connection is served by a
// goroutine of its own, which writes one notice for all the commits since
// its last one, and a subscriber that does not read its notices is
// dropped once a write to it has waited pushWriteTimeout.
//
// The subscription also tells a standby that the owner is gone: the
// kernel closes a dead process's connections, and the subscriber, reading
// end of file, has the promoter try the lock at once and then every
// promoteFastRetry for a while (see promoterPause).

package owner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ActionSubscribe asks the owner for commit notices on this connection:
// the owner answers with one Response line (OK), then writes one Notice
// line after each commit (several commits in a row may make one notice),
// until either side closes the connection. No other request follows on it.
const ActionSubscribe = "subscribe"

// The wake modes Status reports (Status.Wake).
const (
	// WakePush: the owner pushes commit notices (the owner's status says
	// it serves them; a non-owner's, that it is subscribed).
	WakePush = "push"
	// WakePolling: followers in this process are woken by polling the
	// store's file (every recordresults.Options.ChangeInterval) only:
	// there is no owner to subscribe to, it does not push, or the
	// connection was lost and is being made again.
	WakePolling = "polling"
)

// pushWriteTimeout is how long the owner's goroutine for one subscriber
// waits for a notice to be taken before it drops the subscriber.
const pushWriteTimeout = time.Second

// pushRetry is how often a non-owner tries to subscribe while it has no
// subscription; pushRefusedRetry, after an owner refused the action (a
// build without it).
const (
	pushRetry        = 50 * time.Millisecond
	pushRefusedRetry = 5 * time.Second
)

// maxNotice bounds a notice line.
const maxNotice = 256

// Notice is one commit notice on a subscription.
type Notice struct {
	// Commit counts the commits the owner announced since it started
	// serving: it grows with every notice (by more than one when
	// commits came faster than the subscriber read).
	Commit uint64 `json:"commit"`
}

// DecodeNotice parses one notice line (JSON, with or without its
// newline). Anything but a JSON object with a positive commit count is
// refused with an error wrapping ErrProtocol.
func DecodeNotice(line []byte) (Notice, error) {
	var n Notice
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return Notice{}, fmt.Errorf("%w: notice: %w", ErrProtocol, err)
	}
	if dec.More() {
		return Notice{}, fmt.Errorf("%w: notice: data after the object", ErrProtocol)
	}
	if n.Commit == 0 {
		return Notice{}, fmt.Errorf("%w: notice: no commit count", ErrProtocol)
	}
	return n, nil
}

// appendNotice appends notice n's line to buf.
func appendNotice(buf []byte, n uint64) []byte {
	buf = append(buf, `{"commit":`...)
	buf = strconv.AppendUint(buf, n, 10)
	return append(buf, "}\n"...)
}

// pushHub is the owner's side: what its subscribers wait on. The zero
// value is ready.
type pushHub struct {
	commits atomic.Uint64
	subs    atomic.Int64
	mu      sync.Mutex
	changed chan struct{} // closed and replaced by committed; nil until watched
}

// committed announces a commit: it counts it and wakes every subscriber's
// goroutine. It never blocks (it is the writer's, under its Notifier's lock).
func (h *pushHub) committed() {
	h.commits.Add(1)
	h.mu.Lock()
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	h.mu.Unlock()
}

// watch returns a channel closed at the next commit and the commits so far.
func (h *pushHub) watch() (<-chan struct{}, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed, h.commits.Load()
}

// pushState is a Store's push: the hub it serves as owner, the wake mode
// it has as non-owner, and the promoter's kick. The zero value is ready.
type pushState struct {
	hub      pushHub
	wake     atomic.Pointer[string] // nil: polling
	notices  atomic.Uint64          // notices taken as a non-owner (Status.Notices)
	filter   noticeFilter           // which notices start a probe of the file
	kickOnce sync.Once
	kickCh   chan struct{}
	// clock times the promotion under way, and prev is the state file's
	// owner before it (see takeOverSocket); both set and read by the
	// promoting goroutine only, nil and zero otherwise.
	clock *promotionClock
	prev  State
}

// kick returns the channel through which the subscriber tells the
// promoter that the owner's connection ended.
func (p *pushState) kick() chan struct{} {
	p.kickOnce.Do(func() { p.kickCh = make(chan struct{}, 1) })
	return p.kickCh
}

// wakeMode returns WakePush or WakePolling.
func (p *pushState) wakeMode() string {
	if w := p.wake.Load(); w != nil {
		return *w
	}
	return WakePolling
}

func (p *pushState) setWake(mode string) { p.wake.Store(&mode) }

// subscriptionHandler is what serves ActionSubscribe (a Store does; a
// handler without it answers the action as unknown).
type subscriptionHandler interface {
	controlSubscribe(ctx context.Context, c net.Conn)
}

// startPush has the backend's commits announced to the subscribers until
// ctx (the owner's tenure) ends.
func (s *Store[T]) startPush(ctx context.Context) {
	cancel := s.backend.Notifier().Observe(s.push.hub.committed)
	context.AfterFunc(ctx, cancel)
}

// controlSubscribe serves one subscriber on c until it goes away, a write
// to it waits longer than pushWriteTimeout, or ctx (the control server's)
// ends.
func (s *Store[T]) controlSubscribe(ctx context.Context, c net.Conn) {
	h := &s.push.hub
	ch, sent := h.watch()
	h.subs.Add(1)
	defer h.subs.Add(-1)
	ctx, cancel := context.WithCancel(ctx)
	read := make(chan struct{})
	go func() { // the subscriber sends nothing more: its end of file is its leaving
		defer close(read)
		_, _ = io.Copy(io.Discard, c)
		cancel()
	}()
	defer func() {
		cancel()
		_ = c.Close()
		<-read
	}()
	_ = c.SetReadDeadline(time.Time{})
	_ = c.SetWriteDeadline(time.Now().Add(pushWriteTimeout))
	if err := json.NewEncoder(c).Encode(Response{Protocol: Protocol, OK: true, Epoch: s.backend.Epoch()}); err != nil {
		return
	}
	buf := make([]byte, 0, 32)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
		var n uint64
		ch, n = h.watch()
		if n == sent {
			continue
		}
		sent = n
		_ = c.SetWriteDeadline(time.Now().Add(pushWriteTimeout))
		if _, err := c.Write(appendNotice(buf[:0], n)); err != nil {
			s.log.Debug("push: subscriber dropped", "error", err)
			return
		}
	}
}

// changePoller is a backend that can look for other processes' commits
// at once (sqlite.Backend.PollChanges) instead of at its next poll, and
// poll less while the owner's notices reach it (SetPushed).
type changePoller interface {
	PollChanges()
	SetPushed(on bool)
}

// startSubscriber subscribes this non-owner to the owner's commit notices
// (see subscriber).
func (s *Store[T]) startSubscriber() {
	if _, ok := any(s.backend).(changePoller); !ok {
		return // nothing to wake: polling it stays
	}
	s.wg.Add(1)
	go s.subscriber()
}

// subscriber keeps a subscription to the owner while this process is a
// non-owner: each notice has the backend poll its change feed at once.
// Without one it tries again every pushRetry (pushRefusedRetry after a
// refusal); a subscription that ends kicks the promoter (the owner may
// be gone). It returns when the store closes or this process is
// promoted.
func (s *Store[T]) subscriber() {
	defer s.wg.Done()
	for s.ctx.Err() == nil && s.Role() == RoleNonOwner {
		connected, err := s.subscribeOnce()
		s.push.setWake(WakePolling)
		retry := pushRetry
		switch {
		case connected:
			s.log.Debug("push: subscription lost; polling until it is back", "error", err)
			select {
			case s.push.kick() <- struct{}{}:
			default:
			}
		case errors.Is(err, ErrProtocol):
			s.log.Debug("push: the owner does not push; polling", "error", err)
			retry = pushRefusedRetry
		}
		if !s.pause(retry) {
			return
		}
	}
}

// subscribeOnce subscribes to the owner named by the state file and reads
// its notices until the connection ends. connected says whether the owner
// accepted the subscription.
func (s *Store[T]) subscribeOnce() (connected bool, err error) {
	path := s.ownerSocket()
	if path == "" {
		return false, nil
	}
	dctx, cancel := context.WithTimeout(s.ctx, time.Second)
	var d net.Dialer
	c, err := d.DialContext(dctx, "unix", path)
	cancel()
	if err != nil {
		s.forgetSocket(path)
		return false, err
	}
	defer c.Close()
	stop := context.AfterFunc(s.ctx, func() { _ = c.Close() })
	defer stop()
	_ = c.SetDeadline(time.Now().Add(controlDeadline))
	if err := json.NewEncoder(c).Encode(Request{Protocol: Protocol, Action: ActionSubscribe}); err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(c, maxNotice)
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return false, fmt.Errorf("%w: subscribe: %w", ErrProtocol, err)
	}
	if !resp.OK {
		return false, fmt.Errorf("%w: subscribe: %s", ErrProtocol, resp.Error)
	}
	_ = c.SetDeadline(time.Time{})
	s.push.setWake(WakePush)
	poller := any(s.backend).(changePoller)
	poller.SetPushed(true)
	defer poller.SetPushed(false) // polls at once, and at the usual pace again
	// PollChanges returns at once; a poll under way is followed by one
	// more, not one per notice. Notices of this process's own commits
	// start none (noticeFilter).
	s.push.filter.reset(resp.Epoch, poller.PollChanges)
	defer s.push.filter.reset(0, nil)
	poller.PollChanges() // whatever was committed while there was no subscription
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return true, err
		}
		n, err := DecodeNotice(line)
		if err != nil {
			return true, err
		}
		s.push.filter.notice(n.Commit)
		s.push.notices.Add(1)
	}
}
