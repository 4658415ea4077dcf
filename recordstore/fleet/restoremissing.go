// Restoring a missing store: with Options.RestoreMissing, the first open of
// a key whose store file is missing restores the key's replica, under the
// store's lease across hosts, before the store is opened.
//
// The fleet only asks the replica whether it holds a state (a listing);
// the restore itself is the opener's catch-up (records.Options.CatchUp),
// run by the owner election after it took the store's lock and its lease
// and before anything is written, with the fleet's identity check. So:
//
//   - the process that takes the lease restores the replica's newest
//     state, with proof, and owns the store; its lease fences it for as
//     long as it owns it, so a host that owned the store before and comes
//     back never writes it (its writes fail with code fenced, and its next
//     owner open catches up first);
//   - a process of another host that finds the lease held opens the store
//     as a non-owner: it restores a copy to read, taking only the store's
//     local lock, and waits, its promoter trying the lease again (the
//     catch-up at that promotion decides again); its writes wait in its
//     spool;
//   - a process of the same host finds the store's lock held and opens as
//     a non-owner of the restored file.
//
// A replica that records another key is refused with ErrMisplaced (inside
// the restore's replica.ErrCheckFailed) and no store file is made.

package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

// restoreCtx is the context key under which restoreMissing tells the
// Opener that the store's file is missing and must be restored under the
// store's lease.
type restoreCtx struct{}

// RestoringMissing reports whether the fleet calls an Opener, with ctx, to
// restore a missing store from its replica (Options.RestoreMissing): the
// open must take part in the election at once, fenced by the store's lease,
// and catch the store up from its replica (as DefaultOpener does with
// StoreOptions.Fence and CatchUpFrom).
func RestoringMissing(ctx context.Context) bool {
	on, _ := ctx.Value(restoreCtx{}).(bool)
	return on
}

// restoreMissing opens the store of k, whose file abs is missing, restored
// from its replica. restored is false, with no error, when the replica
// holds nothing: the caller goes on as without RestoreMissing. The caller
// holds the root lock shared. On error no store is open and no store file
// was made (the store's lock file may stay, as after any failed open).
func (f *Fleet) restoreMissing(ctx context.Context, k Key, abs string) (st *Store, restored bool, err error) {
	from, err := replica.Join(f.opts.Replica, k.ReplicaPrefix())
	if err != nil {
		return nil, false, err
	}
	txid, err := replica.NewestTXID(ctx, from)
	if err != nil {
		return nil, false, fmt.Errorf("restore the missing store of %s: read its replica: %w", k, err)
	}
	if txid == 0 {
		f.log.Info("store missing and its replica empty", "key", k.String())
		return nil, false, nil
	}
	f.log.Info("store missing: restoring it from its replica under its lease", "key", k.String(), "replica_txid", txid)
	st, err = f.opts.Open(context.WithValue(withKey(ctx, k), restoreCtx{}, true), abs)
	if err != nil {
		return nil, false, fmt.Errorf("restore the missing store of %s from its replica: %w", k, err)
	}
	id, err := f.readIdentity(ctx, abs)
	if err == nil {
		err = checkIdentity(id, k, abs)
	} else if errors.Is(err, errNoStore) {
		err = recordstore.Errorf(recordstore.ErrNotFound, "the store of %s was not restored (its replica emptied meanwhile?)", k)
	}
	if err == nil {
		err = f.reconcile(ctx, st, abs)
	}
	if err != nil {
		_ = st.Close()
		return nil, false, err
	}
	return st, true, nil
}
