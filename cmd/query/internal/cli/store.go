// Opening the store named by --store for the length of one command: through
// owner election (records.Open), read-only without election with
// --read-only (or for a read that cannot write), or read-only without any
// lock for the one command that must not take it (spool publish's catalog
// read).

package cli

import (
	"context"
	"log/slog"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// withOwned opens the store through owner election with opts, runs fn on
// it and closes it. When no process owns the store this one becomes the
// owner for the length of the command: it opens the live file writable,
// ingests what waits in the spool, and on close drains the spool again and
// releases the lock. Otherwise it opens the live file read-only and its
// mutations go through the spool to the owner, which answers with their
// exact result. With --read-only it opens the store read-only without
// taking part in the election, and every write fails with read_only. A
// failure to close is reported when fn itself succeeded.
// Errors of the store are passed on as they are: they already say what was
// being done.
func (a *app) withOwned(ctx context.Context, opts records.Options, fn func(*records.Store) error) (err error) {
	if a.storePath == "" {
		return usagef("--store must not be empty")
	}
	opts.Owner.Build = "query " + buildVersion().Version
	if a.readOnly {
		opts.ReadOnly = true
	}
	if !opts.ReadOnly {
		if opts.Owner.Replica, err = a.replicator(); err != nil {
			return err
		}
		if opts.Owner.Fence, err = a.fence(); err != nil {
			return err
		}
		if opts.Owner.Fence != nil {
			// A host taking the store over starts from the replica.
			opts.CatchUp = replica.CatchUpFunc(a.storePath, a.replica, a.logger(slog.LevelWarn))
		}
	}
	st, err := records.Open(ctx, a.storePath, opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return fn(st)
}

// quietly opens the store for a command that does one thing and exits: only
// warnings and errors are logged (unless --log-level says otherwise) and no
// background retention sweeper is started; retention is the job of the
// long-lived owner (query serve).
func (a *app) quietly(ctx context.Context, fn func(*records.Store) error) error {
	opts := records.Options{Owner: records.OwnerOptions{Logger: a.logger(slog.LevelWarn)}, SweepInterval: -1}
	return a.withOwned(ctx, opts, fn)
}

// reading opens the store, as quietly does, for a command that only reads
// (scan, meta, streams, kind list): a path with no store is not_found
// instead of a new empty store, and a store this process cannot write (a
// read-only folder, a full disk) is opened read-only instead of failing.
func (a *app) reading(ctx context.Context, fn func(*records.Store) error) error {
	opts := records.Options{Owner: records.OwnerOptions{Logger: a.logger(slog.LevelWarn)}, SweepInterval: -1,
		MustExist: true, ReadOnlyFallback: true}
	return a.withOwned(ctx, opts, fn)
}

// readCatalog opens the live file read-only without Submit — only the
// reader pool, no lock, no write, no owner election — and runs fn on it.
func (a *app) readCatalog(ctx context.Context, fn func(recordstore.Backend) error) (err error) {
	if a.storePath == "" {
		return usagef("--store must not be empty")
	}
	opts := sqlite.Options{Logger: a.logger(slog.LevelWarn), ReadOnly: true, SweepInterval: -1}
	b, err := sqlite.Open(ctx, a.storePath, opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := b.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return fn(b)
}
