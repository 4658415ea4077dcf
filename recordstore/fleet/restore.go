// Restore: a store of the fleet rebuilt from its replica, with every proof
// of replica.Restore and one more, the fleet's own: the copy must record
// the key whose store it replaces.

package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// RestoreOptions say where Restore reads a store from and to what point.
type RestoreOptions struct {
	// From is the replica address of this store (see replica.NewClient).
	// Required.
	From string
	// TXID and At pick the point to restore to (replica.RestoreOptions);
	// both zero: the newest.
	TXID uint64
	At   time.Time
	// Force lets Restore replace the key's store file when there is one.
	Force bool
}

// Restore rebuilds the store of k from its replica (replica.Restore on
// the store file, which is the store's own live file). It first closes
// the store in this process (waiting for its leases until ctx ends), then
// holds the root lock exclusive, so that no open in any process on this
// host starts meanwhile, and the store's lock for the whole restore: a
// store another process owns is ErrInUse (code in_use) and nothing
// changes. A key that has a store is ErrExists without opts.Force
// (replica.ErrExists, code exists). Besides the proofs of replica.Restore
// (replica.ErrGap, replica.ErrChecksum, replica.ErrCheckFailed), the copy
// must record k (a replica of another key's store is
// replica.ErrCheckFailed wrapping ErrMisplaced).
//
// On error the key's store is as it was (see replica.Restore). Across
// hosts sharing the fleet's root only the lease makes a restore safe: the
// root and store locks are flocks, which hold on one host.
func (f *Fleet) Restore(ctx context.Context, k Key, opts RestoreOptions) (replica.RestoreResult, error) {
	var res replica.RestoreResult
	abs, err := f.Path(k)
	if err != nil {
		return res, err
	}
	f.mu.Lock()
	err = f.usableLocked(k)
	f.mu.Unlock()
	if err != nil {
		return res, err
	}
	if err := f.drain(ctx, k); err != nil {
		return res, err
	}
	unlock, err := f.lockRoot(ctx, true)
	if err != nil {
		return res, err
	}
	defer unlock()
	res, err = replica.Restore(ctx, abs, replica.RestoreOptions{
		From: opts.From, LiveFile: abs, TXID: opts.TXID, At: opts.At, Force: opts.Force, Logger: f.log,
		Check: identityCheck(k, opts.From),
	})
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", k, err)
	}
	f.mu.Lock()
	delete(f.stamps, k)
	f.mu.Unlock()
	return res, nil
}

// identityCheck is the fleet's check of a copy of k's store staged from
// the replica at from (replica.RestoreOptions.Check): the copy must record
// k, else ErrMisplaced.
func identityCheck(k Key, from string) func(ctx context.Context, staged string) error {
	return func(ctx context.Context, staged string) error {
		id, err := stagedIdentity(ctx, staged)
		if err != nil {
			return err
		}
		return checkIdentity(id, k, "the copy of "+replica.Redact(from))
	}
}

// stagedIdentity reads the key a staged copy records, opening it
// immutable (nothing writes it, and nothing is created beside it).
func stagedIdentity(ctx context.Context, staged string) (string, error) {
	db, err := sqlite.OpenFile(ctx, staged, sqlite.FileOptions{Immutable: true})
	if err != nil {
		return "", err
	}
	defer db.Close()
	return identityOf(ctx, db, staged)
}
