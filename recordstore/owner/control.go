// The control socket, protocol 1: one JSON request and one JSON response per
// connection over a unix socket (mode 0600), 10 s deadlines — or, when the
// request asks to keep the connection (Request.Keep) and the owner agrees
// (Response.Keep), further requests on the same connection. It only makes
// things fast and observable; correctness never depends on it.

package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Protocol is the control protocol version this package speaks.
const Protocol = 1

// controlDeadline bounds every control connection.
const controlDeadline = 10 * time.Second

// maxRequest caps the size of one control request.
const maxRequest = 1 << 20

// keepIdle is how long the owner keeps a kept connection (Request.Keep)
// open without a request on it; keepClientIdle, how long a client reuses
// one it has not used: shorter, so that the client never sends on a
// connection the owner is closing for idleness.
const (
	keepIdle       = 30 * time.Second
	keepClientIdle = 10 * time.Second
)

// The control actions.
const (
	ActionStatus = "status"
	ActionIngest = "ingest"
	ActionSpool  = "spool"
	// ActionReplicated waits until the owner's replica holds every
	// commit made before the request (see Store.WaitReplicated).
	ActionReplicated = "replicated"
)

// Request is one control request.
type Request struct {
	Protocol int      `json:"protocol"`
	Action   string   `json:"action"`
	IDs      []string `json:"ids,omitempty"`
	Wait     bool     `json:"wait,omitempty"`
	// Batch is the inline batch of the append action.
	Batch []byte `json:"batch,omitempty"`
	// Keep asks the owner to keep the connection open after its answer,
	// for the client's next request (any action but subscribe). An owner
	// that predates it ignores it and closes the connection.
	Keep bool `json:"keep,omitempty"`
}

// Response is one control response. Error is set when OK is false.
type Response struct {
	Protocol int             `json:"protocol"`
	OK       bool            `json:"ok"`
	Error    string          `json:"error,omitempty"`
	Status   *Status         `json:"status,omitempty"`
	Results  []IngestOutcome `json:"results,omitempty"`
	Spool    *SpoolListing   `json:"spool,omitempty"`
	// NotReplicated answers ActionReplicated of an owner without a
	// replica (OK is false).
	NotReplicated bool `json:"notReplicated,omitempty"`
	// Keep says that the owner keeps the connection open for the next
	// request (the request asked for it): it reads the next one for
	// keepIdle, then closes the connection.
	Keep bool `json:"keep,omitempty"`
	// Epoch, in the answer to the subscribe action, is the owner's
	// writer epoch: the notices that follow count that owner's commits
	// (IngestOutcome.Commit).
	Epoch int64 `json:"epoch,omitempty"`
}

// IngestOutcome answers ingest for one batch id: Done with the ledger's
// result once the batch was applied or failed, not Done while it is still
// waiting (the caller keeps waiting, by socket or by polling the ledger).
type IngestOutcome struct {
	ID     string                   `json:"id"`
	Done   bool                     `json:"done"`
	Result *recordstore.BatchResult `json:"result,omitempty"`
	// Unknown says, in the answer to a wait, that neither the owner's
	// ledger nor its spool holds the batch: it was never published to
	// this store, or applied so long ago that its ledger row was swept.
	// Waiting longer would not help. (Done is false.)
	Unknown bool `json:"unknown,omitempty"`
	// Commit and Epoch, in the answer to the append action, say which
	// commit notice announces the batch's commit — the Commit-th of the
	// owner of Epoch — when that commit held nothing but this batch
	// (and no declaration); 0 when the owner cannot say exactly. The
	// producer then skips the probe of the file that notice would start
	// (see noticeFilter). An owner that predates them sends neither.
	Commit uint64 `json:"commit,omitempty"`
	Epoch  int64  `json:"epoch,omitempty"`
}

// SpoolListing is the answer to the spool action.
type SpoolListing struct {
	Incoming []BatchRef `json:"incoming"`
	Failed   []BatchRef `json:"failed"`
}

// BatchRef names one spooled batch.
type BatchRef struct {
	Batch    string    `json:"batch"`
	Producer string    `json:"producer"`
	Seq      int64     `json:"seq"`
	Created  time.Time `json:"created"`
	// Applied is true for a batch of incoming/ this owner has committed,
	// whose folder waits for the backend's next Sync to leave for trash/
	// (it is the batch's durable copy until then); false for one waiting
	// to be applied, and for every failed one.
	Applied bool `json:"applied"`
}

// controlHandler is what the server asks of the owner.
type controlHandler interface {
	controlStatus(ctx context.Context) Status
	controlIngest(ctx context.Context, ids []string, wait bool) []IngestOutcome
	controlSpool(ctx context.Context) (SpoolListing, error)
	controlReplicated(ctx context.Context) (notReplicated bool, err error)
}

// controlServer serves one socket path.
type controlServer struct {
	path   string
	ln     *net.UnixListener
	h      controlHandler
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// listenControl binds the socket at path. A socket file already there is
// replaced only when a dial to it fails (its owner is gone).
func listenControl(path string, h controlHandler, log *slog.Logger) (*controlServer, error) {
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("control socket %s is served by a live process", path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	s := &controlServer{path: path, ln: ln, h: h, log: log}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func (s *controlServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

// handle serves one connection: one request and its answer, then more
// while the client asks to keep the connection (Request.Keep), each with
// its own deadline, until the client leaves, keepIdle passes without a
// request, or the server closes.
func (s *controlServer) handle(c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(s.ctx, func() { _ = c.SetDeadline(time.Now()) }) // a kept connection's wait ends
	defer stop()
	lr := &requestLimit{r: c}
	dec := json.NewDecoder(lr)
	enc := json.NewEncoder(c)
	for first := true; ; first = false {
		deadline := time.Now().Add(controlDeadline)
		if !first {
			_ = c.SetDeadline(time.Now().Add(keepIdle))
			if s.ctx.Err() != nil {
				return // closing: the AfterFunc above may have run before this deadline replaced its own
			}
		} else {
			_ = c.SetDeadline(deadline)
		}
		lr.n = maxRequest
		var req Request
		resp := Response{Protocol: Protocol}
		err := dec.Decode(&req)
		if !first {
			if err != nil {
				return // the client left, or kept it idle too long
			}
			deadline = time.Now().Add(controlDeadline)
			_ = c.SetDeadline(deadline)
			if s.ctx.Err() != nil {
				return
			}
		}
		switch {
		case err != nil:
			resp.Error = "malformed request: " + err.Error()
		case req.Protocol != Protocol:
			resp.Error = fmt.Sprintf("unsupported protocol %d (this owner speaks %d)", req.Protocol, Protocol)
		case req.Action == ActionSubscribe && first:
			if sub, ok := s.h.(subscriptionHandler); ok {
				sub.controlSubscribe(s.ctx, c) // a long-lived connection: see push.go
				return
			}
			s.dispatchWithin(deadline, req, &resp)
		case req.Action == ActionSubscribe:
			resp.Error = "subscribe on a kept connection: dial a connection of its own"
		default:
			s.dispatchWithin(deadline, req, &resp)
		}
		resp.Keep = err == nil && req.Keep && s.ctx.Err() == nil
		if err := enc.Encode(resp); err != nil {
			s.log.Debug("control reply failed", "error", err)
			return
		}
		if !resp.Keep {
			return
		}
	}
}

// dispatchWithin answers req with a context that ends a second before
// deadline (the connection's), or when the server closes.
func (s *controlServer) dispatchWithin(deadline time.Time, req Request, resp *Response) {
	ctx, cancel := context.WithDeadline(s.ctx, deadline.Add(-time.Second))
	defer cancel()
	s.dispatch(ctx, req, resp)
}

// requestLimit reads from r at most n bytes, then fails: the bound of one
// request on a connection that carries several (n is reset before each).
type requestLimit struct {
	r io.Reader
	n int64
}

func (l *requestLimit) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("request larger than %d bytes", maxRequest)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (s *controlServer) dispatch(ctx context.Context, req Request, resp *Response) {
	switch req.Action {
	case ActionStatus:
		st := s.h.controlStatus(ctx)
		resp.Status, resp.OK = &st, true
	case ActionIngest:
		resp.Results, resp.OK = s.h.controlIngest(ctx, req.IDs, req.Wait), true
	case ActionAppend:
		s.serveAppend(ctx, req, resp)
	case ActionSpool:
		l, err := s.h.controlSpool(ctx)
		if err != nil {
			resp.Error = err.Error()
			return
		}
		resp.Spool, resp.OK = &l, true
	case ActionReplicated:
		notRep, err := s.h.controlReplicated(ctx)
		if err != nil {
			resp.Error, resp.NotReplicated = err.Error(), notRep
			return
		}
		resp.OK = true
	default:
		resp.Error = fmt.Sprintf("unknown action %q", req.Action)
	}
}

// close stops accepting, cancels waiting requests, waits for the handlers,
// and unlinks the socket file only if it still answers as instance (a
// successor may have bound the path since).
func (s *controlServer) close(instance string) {
	ours := false
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	if resp, err := Call(ctx, s.path, Request{Action: ActionStatus}); err == nil && resp.Status != nil {
		ours = resp.Status.Instance == instance
	}
	cancel()
	_ = s.ln.Close()
	s.cancel()
	s.wg.Wait()
	if ours {
		_ = os.Remove(s.path)
	}
}

// Call sends one request to the control socket at path and returns the
// response. It fails when the socket is absent or dead, when ctx ends, after
// the 10 s protocol deadline, or with ErrProtocol when the peer answers
// with an error or malformed JSON.
func Call(ctx context.Context, path string, req Request) (Response, error) {
	resp, _, err := callControl(ctx, path, req, nil)
	return resp, err
}

// callControl is Call with afterSend, when not nil, run between sending
// the request and reading the answer; sent reports whether the request
// was written (the peer may have acted on it).
func callControl(ctx context.Context, path string, req Request, afterSend func()) (resp Response, sent bool, err error) {
	req.Protocol = Protocol
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Response{}, false, fmt.Errorf("dial control socket: %w", err)
	}
	defer c.Close()
	deadline := time.Now().Add(controlDeadline)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return Response{}, true, fmt.Errorf("send control request: %w", err)
	}
	if afterSend != nil {
		afterSend()
	}
	if err := json.NewDecoder(io.LimitReader(c, 64<<20)).Decode(&resp); err != nil {
		if ctx.Err() != nil {
			return Response{}, true, ctx.Err()
		}
		return Response{}, true, fmt.Errorf("%w: read response: %w", ErrProtocol, err)
	}
	if !resp.OK {
		return resp, true, fmt.Errorf("%w: %s", ErrProtocol, resp.Error)
	}
	return resp, true, nil
}
