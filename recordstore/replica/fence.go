package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fb46ecde/records/recordstore/owner"
)

// LeaseFence is an owner.Fence over the store's S3 lease (AcquireLease):
// the owner takes it before it writes and checks it before every commit.
// It serves one store and may be acquired again after a Release. The
// zero value is not usable: build it with NewLeaseFence.
type LeaseFence struct {
	url  string
	opts LeaseOptions

	mu    sync.Mutex
	lease *Lease
}

// NewLeaseFence returns the fence of the store replicated at url (an
// s3:// address; the lock object sits under its prefix). It does no I/O.
func NewLeaseFence(url string, opts LeaseOptions) *LeaseFence {
	return &LeaseFence{url: url, opts: opts}
}

// Acquire takes the lease (see AcquireLease) and returns its generation.
// It fails with a *LeaseHeldError (code "in_use") while another process
// holds it; nothing is written then.
func (f *LeaseFence) Acquire(ctx context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lease != nil {
		return 0, errors.New("lease already acquired by this process")
	}
	l, err := AcquireLease(ctx, f.url, f.opts)
	if err != nil {
		return 0, err
	}
	f.lease = l
	return l.Generation(), nil
}

// Check is the lease's Check: nil while the holder may write,
// ErrLeaseLost after. Before Acquire it fails with ErrLeaseLost too.
func (f *LeaseFence) Check() error {
	f.mu.Lock()
	l := f.lease
	f.mu.Unlock()
	if l == nil {
		return ErrLeaseLost
	}
	return l.Check()
}

// Release gives the lease up (see Lease.Release); without one it does
// nothing.
func (f *LeaseFence) Release(ctx context.Context) error {
	f.mu.Lock()
	l := f.lease
	f.lease = nil
	f.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Release(ctx)
}

// Status reports the lease held, or only its target when none is.
func (f *LeaseFence) Status() owner.FenceStatus {
	st := owner.FenceStatus{Target: Redact(f.url)}
	f.mu.Lock()
	l := f.lease
	f.mu.Unlock()
	if l == nil {
		return st
	}
	st.Generation, st.Owner, st.SafeUntil = l.Generation(), l.Owner(), l.SafeUntil()
	if err := l.Check(); err != nil {
		st.Lost = err.Error()
	}
	return st
}

// LeaseFactory returns a function giving each store of a fleet its own
// fence (NewLeaseFence) under the sub-prefix it names ("tenant/<id>",
// "slot/<nnnnn>") of url, as fleet.StoreOptions.Fence takes it: the lock
// object of each store sits beside its replica. url must be an s3://
// address; another is refused at once with an error wrapping ErrBadURL.
func LeaseFactory(url string, opts LeaseOptions) (func(sub string) (owner.Fence, error), error) {
	u, err := Parse(url)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "s3" {
		return nil, fmt.Errorf("%w: a lease needs an s3:// replica, not %s://", ErrBadURL, u.Scheme)
	}
	return func(sub string) (owner.Fence, error) {
		su, err := Join(url, sub)
		if err != nil {
			return nil, err
		}
		return NewLeaseFence(su, opts), nil
	}, nil
}

var _ owner.Fence = (*LeaseFence)(nil)
