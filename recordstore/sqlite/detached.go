// Detached mode: a read-only backend with no live file of its own, for a
// process whose catalog version differs from the one the store's owner
// writes. Reads fail with the cause it was opened with; writes reach the
// owner through Options.Submit, checked against the kinds this process
// declared.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// detached is the state of a detached backend: why it is detached, and the
// kinds this process declared (the only ones its appends are checked
// against, since it cannot read the catalog).
type detached struct {
	cause error // Options.Detached

	mu    sync.Mutex
	kinds map[string]*table // by exact kind name, statement-free; guarded by mu
}

// newDetached returns the detached state for Options.Detached, or nil when
// the backend is not detached.
func newDetached(cause error) *detached {
	if cause == nil {
		return nil
	}
	return &detached{cause: cause, kinds: map[string]*table{}}
}

// Detached returns Options.Detached when the backend was opened detached,
// else nil.
func (b *Backend) Detached() error {
	if b.det == nil {
		return nil
	}
	return b.det.cause
}

// detachedErr is what every read of a detached backend returns: it wraps
// the cause, so that errors.Is and errors.As find what the caller passed
// as Options.Detached.
func (b *Backend) detachedErr(what string) error {
	return fmt.Errorf("%s: store %s is open detached: %w", what, b.path, b.det.cause)
}

// openDetached is Open's list of steps in detached mode. It touches no
// file: the reader pool is a pool that refuses every connection with the
// detached error, so that any read reaching it fails with its cause.
func (b *Backend) openDetached(_ context.Context) error {
	if !b.opts.ReadOnly {
		return recordstore.Invalidf("Options.Detached needs Options.ReadOnly")
	}
	b.r = sql.OpenDB(refusing{err: b.detachedErr("connect")})
	return nil
}

// enterRead is enter for a read: a detached backend refuses the read with
// its cause (and holds nothing).
func (b *Backend) enterRead(what string) error {
	if err := b.enter(); err != nil {
		return err
	}
	if b.det != nil {
		b.leave()
		return b.detachedErr(what)
	}
	return nil
}

// declareDetached declares k through Submit and keeps it in this process.
// A kind this process holds already as declared is KindUnchanged and
// nothing is submitted; a declaration conflicting with the one it holds is
// refused here. The owner reconciles k with its catalog: its refusal (a
// conflict with a kind another process declared) is returned and k is not
// kept, nor is it when Submit fails.
func (b *Backend) declareDetached(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	what := "declare kind " + k.Name
	if held := b.det.kind(k.Name); held != nil {
		_, status, err := recordstore.Reconcile(held.kind, k, false)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if status == recordstore.KindUnchanged {
			return status, nil
		}
	}
	// Without the catalog, any other declaration may be a new one.
	if err := checkDeclaration(&k, recordstore.KindCreated); err != nil {
		return "", err // it names the kind
	}
	r, err := b.submit(ctx, what, []recordstore.Kind{k}, recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: k.Name})
	if err != nil {
		return "", err
	}
	if err := b.det.keep(ctx, k); err != nil {
		return r.Status, fmt.Errorf("%s: %w", what, err)
	}
	return r.Status, nil
}

// kind returns the table of a kind this process declared, or nil.
func (d *detached) kind(name string) *table {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.kinds[name]
}

// keep records k as declared by this process, merged with what it held
// (added columns; the owner accepted the declaration, so it reconciles).
func (d *detached) keep(ctx context.Context, k recordstore.Kind) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if held := d.kinds[k.Name]; held != nil {
		if merged, _, err := recordstore.Reconcile(held.kind, k, false); err == nil {
			k = merged
		}
	}
	t, err := newTable(ctx, nil, nil, k, k.Name) // no statements: nothing is prepared
	if err != nil {
		return err
	}
	d.kinds[k.Name] = t
	return nil
}

// refusing is the database/sql connector of a detached backend's reader
// pool: every connection attempt fails with err.
type refusing struct{ err error }

// Connect refuses.
func (c refusing) Connect(context.Context) (driver.Conn, error) { return nil, c.err }

// Driver returns the connector itself, which refuses to open too.
func (c refusing) Driver() driver.Driver { return c }

// Open refuses.
func (c refusing) Open(string) (driver.Conn, error) { return nil, c.err }
