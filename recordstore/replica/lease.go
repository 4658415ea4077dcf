package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"
)

// DefaultLeaseTTL is LeaseOptions.TTL's default.
const DefaultLeaseTTL = 15 * time.Second

// ErrLeaseHeld is returned by AcquireLease while another process holds an
// unexpired lease on the store; the error is a *LeaseHeldError naming the
// holder and its expiry. Its code is "in_use".
var ErrLeaseHeld = errors.New("lease held by another process")

// ErrLeaseLost is passed to LeaseOptions.OnLost (and returned by Check)
// once the lease can no longer be trusted: a renewal found that another
// process took it, or renewals failed until the lease's safe time ran out.
var ErrLeaseLost = errors.New("lease lost")

// LeaseHeldError is ErrLeaseHeld with the holder's details.
type LeaseHeldError struct {
	Owner     string
	ExpiresAt time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%v: %s until %s", ErrLeaseHeld, e.Owner, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrLeaseHeld) hold.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// ErrorCode is the engine code of the error ("in_use").
func (e *LeaseHeldError) ErrorCode() string { return "in_use" }

// LeaseOptions are the options of AcquireLease.
type LeaseOptions struct {
	// TTL is how long a lease lasts without renewal; 0 is DefaultLeaseTTL.
	// The holder renews every TTL/3.
	TTL time.Duration
	// Margin is taken off the TTL for the holder's own view of its lease:
	// the holder stops trusting the lease Margin before another process
	// may take it, to cover clock drift between hosts and a write already
	// in flight. 0 is TTL/5.
	Margin time.Duration
	// Owner names the holder in the lock object ("host:pid" when empty).
	Owner string
	// OnLost, when not nil, is called once, from the renewal goroutine,
	// when the lease is lost (ErrLeaseLost wrapping the cause).
	OnLost func(error)
	// Logger, when not nil, gets a line per failed renewal and the loss.
	Logger *slog.Logger
}

// Lease is a held lease on one store: Litestream's S3 lease, a lock object
// "<prefix>/lock.json" replaced only with conditional PUTs. Its Generation
// grows by one with every new holder, so it fences writers across hosts:
// a holder that was paused past its TTL finds a newer generation and stops.
type Lease struct {
	leaser *lss3.Leaser
	opts   LeaseOptions
	log    *slog.Logger

	mu      sync.Mutex
	cur     *litestream.Lease
	safe    time.Time // the holder trusts the lease until then
	lostErr error

	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// AcquireLease takes the lease of the store whose replica is at raw (an
// s3:// address; the lock object sits under its prefix) and starts
// renewing it. It fails with a *LeaseHeldError while another process holds
// an unexpired lease; nothing is written then.
func AcquireLease(ctx context.Context, raw string, opts LeaseOptions) (*Lease, error) {
	t, err := NewS3Target(ctx, raw)
	if err != nil {
		return nil, err
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.Margin <= 0 || opts.Margin >= opts.TTL {
		opts.Margin = opts.TTL / 5
	}
	l := lss3.NewLeaser()
	l.SetClient(t.Client)
	l.Bucket, l.Path, l.TTL = t.Bucket, trimSlash(t.Prefix), opts.TTL
	if opts.Owner != "" {
		l.Owner = opts.Owner
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l.SetLogger(log)
	start := time.Now()
	cur, err := l.AcquireLease(ctx)
	if err != nil {
		var held *litestream.LeaseExistsError
		if errors.As(err, &held) {
			return nil, &LeaseHeldError{Owner: held.Owner, ExpiresAt: held.ExpiresAt}
		}
		return nil, fmt.Errorf("acquire lease at %s: %w", Redact(raw), err)
	}
	h := &Lease{leaser: l, opts: opts, log: log, cur: cur, safe: start.Add(opts.TTL - opts.Margin),
		stop: make(chan struct{}), done: make(chan struct{})}
	go h.renew()
	return h, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// Generation is the lease's fencing generation: one more than the holder
// before it.
func (h *Lease) Generation() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur.Generation
}

// Check returns nil while the holder may write: the lease was renewed
// recently enough that no other process can have taken it. After that it
// returns ErrLeaseLost (wrapping the cause) for good.
func (h *Lease) Check() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lostErr == nil && !time.Now().Before(h.safe) {
		h.lostErr = fmt.Errorf("%w: not renewed in time (safe until %s)", ErrLeaseLost, h.safe.UTC().Format(time.RFC3339Nano))
	}
	return h.lostErr
}

// renew renews the lease every TTL/3 until Release or the loss.
func (h *Lease) renew() {
	defer close(h.done)
	tick := time.NewTicker(h.opts.TTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
		if err := h.Check(); err != nil {
			h.lose(err)
			return
		}
		h.mu.Lock()
		cur := h.cur
		h.mu.Unlock()
		start := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), h.safeTime())
		next, err := h.leaser.RenewLease(ctx, cur)
		cancel()
		switch {
		case err == nil:
			h.mu.Lock()
			h.cur, h.safe = next, start.Add(h.opts.TTL-h.opts.Margin)
			h.mu.Unlock()
		case errors.Is(err, litestream.ErrLeaseNotHeld):
			h.lose(fmt.Errorf("%w: another process took it", ErrLeaseLost))
			return
		default:
			h.log.Warn("lease_renewal_failed", "err", err, "safe_until", h.safeTime())
		}
	}
}

func (h *Lease) safeTime() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.safe
}

// lose records the loss and tells OnLost once.
func (h *Lease) lose(err error) {
	h.mu.Lock()
	if h.lostErr == nil {
		h.lostErr = err
	}
	h.safe = time.Time{}
	h.mu.Unlock()
	h.lostOnce.Do(func() {
		h.log.Error("lease_lost", "err", err)
		if h.opts.OnLost != nil {
			h.opts.OnLost(err)
		}
	})
}

// Release stops renewing and marks the lock object expired if this holder
// still has it (a conditional PUT), so that another process may take the
// lease at once, with the next generation. It is safe
// to call more than once; after a loss it only stops the renewals.
func (h *Lease) Release(ctx context.Context) error {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
	h.mu.Lock()
	lost, cur := h.lostErr, h.cur
	h.lostErr = fmt.Errorf("%w: released", ErrLeaseLost)
	h.safe = time.Time{}
	h.mu.Unlock()
	if lost != nil {
		return nil
	}
	// Not Litestream's ReleaseLease: it deletes the lock object, and the
	// next holder would start again at generation 1. An expired lease
	// keeps the generation for the next holder to count on from.
	expire := *h.leaser
	expire.TTL = time.Nanosecond
	_, err := expire.RenewLease(ctx, cur)
	if err == nil || errors.Is(err, litestream.ErrLeaseNotHeld) {
		return nil
	}
	return fmt.Errorf("release lease: %w", err)
}

// Owner is the holder's name as the lock object records it.
func (h *Lease) Owner() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur.Owner
}

// SafeUntil is when the holder stops trusting the lease unless a renewal
// succeeds before (zero once it is lost or released).
func (h *Lease) SafeUntil() time.Time {
	return h.safeTime()
}
