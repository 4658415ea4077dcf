// Kept connections: a producer's fast-path requests reuse its connections
// to the owner's socket (Request.Keep) instead of dialing one per append.
// A kept connection is only ever an optimisation: one that turns out dead
// before any of a request was written to it is dropped and the request
// sent on a new connection; one that dies after is handled exactly as a
// connection that breaks after the send (the owner may have committed the
// batch: the producer asks the ledger).

package owner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// keptConn is one idle connection to an owner's socket.
type keptConn struct {
	c    net.Conn
	dec  *json.Decoder
	used time.Time // when its last answer was read
}

// connPool holds a producer's idle connections to the owner's socket at
// path; connections to any other path are closed as soon as it is asked
// for another. The zero value is ready.
type connPool struct {
	mu     sync.Mutex
	path   string
	idle   []*keptConn
	closed bool
}

// maxKept bounds the idle connections a pool holds.
const maxKept = 8

// get returns an idle connection to path that was used within
// keepClientIdle, or nil.
func (p *connPool) get(path string) *keptConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path != path {
		p.dropLocked()
		p.path = path
	}
	for len(p.idle) > 0 {
		k := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(k.used) < keepClientIdle {
			return k
		}
		_ = k.c.Close()
	}
	return nil
}

// put gives back a connection to path whose answer was read whole.
func (p *connPool) put(path string, k *keptConn) {
	k.used = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.path != path || len(p.idle) >= maxKept {
		_ = k.c.Close()
		return
	}
	p.idle = append(p.idle, k)
}

// forget closes the idle connections to path.
func (p *connPool) forget(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path == path {
		p.dropLocked()
	}
}

// close closes every idle connection; none is kept after it.
func (p *connPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.dropLocked()
}

func (p *connPool) dropLocked() {
	for _, k := range p.idle {
		_ = k.c.Close()
	}
	p.idle = nil
}

// callKept is callControl over the pool's connections to path: a kept
// connection when one is idle, else a new one, asking the owner to keep
// it (Request.Keep). A kept connection found dead before any byte of the
// request was written to it is dropped, and the request goes on a new
// connection. afterSend and sent are callControl's.
func (p *connPool) callKept(ctx context.Context, path string, req Request, afterSend func()) (resp Response, sent bool, err error) {
	req.Protocol, req.Keep = Protocol, true
	line, err := json.Marshal(req)
	if err != nil {
		return Response{}, false, fmt.Errorf("encode control request: %w", err)
	}
	line = append(line, '\n')
	for {
		k, reused := p.get(path), true
		if k == nil {
			reused = false
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return Response{}, false, fmt.Errorf("dial control socket: %w", err)
			}
			k = &keptConn{c: c, dec: json.NewDecoder(io.LimitReader(c, 64<<20))}
		}
		resp, sent, keep, err := k.call(ctx, line, afterSend)
		if reused && !sent {
			_ = k.c.Close()
			continue // a kept connection the owner closed: nothing of the request reached it
		}
		if keep {
			p.put(path, k)
		} else {
			_ = k.c.Close()
		}
		return resp, sent, err
	}
}

// call sends one request line on k and reads its answer. keep says
// whether k may carry the next request: the answer was read whole, the
// owner keeps the connection, and ctx did not cut the exchange short.
func (k *keptConn) call(ctx context.Context, line []byte, afterSend func()) (resp Response, sent, keep bool, err error) {
	deadline := time.Now().Add(controlDeadline)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = k.c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = k.c.SetDeadline(time.Now()) })
	n, werr := k.c.Write(line)
	if werr != nil {
		stop()
		return Response{}, n > 0, false, fmt.Errorf("send control request: %w", werr)
	}
	if afterSend != nil {
		afterSend()
	}
	derr := k.dec.Decode(&resp)
	// When ctx ended meanwhile its deadline was moved: the connection is
	// not used again.
	keep = stop() && derr == nil && resp.Keep
	if derr != nil {
		if ctx.Err() != nil {
			return Response{}, true, false, ctx.Err()
		}
		return Response{}, true, false, fmt.Errorf("%w: read response: %w", ErrProtocol, derr)
	}
	if !resp.OK {
		return resp, true, keep, fmt.Errorf("%w: %s", ErrProtocol, resp.Error)
	}
	return resp, true, keep, nil
}
