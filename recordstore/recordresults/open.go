// Open: owner election over the SQLite backend for one store path.

package recordresults

import (
	"context"
	"log/slog"
	"time"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"

	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // read Parquet batches
)

// Store is a store opened by Open.
type Store = owner.Store[*sqlite.Backend]

// Writer is the bulk writer of a Store (Store.NewWriter).
type Writer = owner.Writer[*sqlite.Backend]

// Options configure Open. The zero value is usable.
type Options struct {
	// Logger receives the store's log lines; default: discard.
	Logger *slog.Logger
	// Build names this build in the state file and spool manifests.
	Build string
	// Format is the codec of batches this process spools as a non-owner:
	// "ndjson" (default), "ndjson.gz" or "parquet".
	Format string
	// StartWait bounds a non-owner's wait for the owner to be ready
	// (default 60s).
	StartWait time.Duration
	// DrainOnClose bounds the owner's final drain (default 10s).
	DrainOnClose time.Duration
	// SweepInterval is the retention sweeper's period while this process
	// owns the store (default 1m; negative disables it).
	SweepInterval time.Duration
	// Heartbeat is the owner's state refresh period (default 5s).
	Heartbeat time.Duration
	// ChangeInterval is how often a non-owner looks for the owner's
	// commits to wake its followers (Notifier, Tail; default 100ms): a
	// follower in another process sees an append after about half of it.
	ChangeInterval time.Duration
	// Events are the owner's callbacks (role changes, batches).
	Events owner.Events
	// Failpoint is called at the owner's named points (crash tests).
	Failpoint func(name string)
	// Spool configures the spool folder (limits, fault injection).
	Spool spool.Options
}

// Open opens the store configured at path (for example
// data/records.sqlite; the live file is data/v1/records.sqlite). See
// owner.Open for the roles and what is on disk when it fails. A process
// whose store is owned by a build with another catalog version opens
// detached (owner.RoleDetached): its writes go through the spool, its reads
// fail with *owner.CatalogVersionError. A path the SQLite backend would
// refuse (sqlite.CheckPath), or a Format no codec is registered for, is
// refused before anything is created.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := sqlite.CheckPath(path); err != nil {
		return nil, err
	}
	return owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path:           path,
		CatalogVersion: sqlite.CatalogVersion,
		Build:          opts.Build,
		Format:         opts.Format,
		StartWait:      opts.StartWait,
		DrainOnClose:   opts.DrainOnClose,
		Heartbeat:      opts.Heartbeat,
		Logger:         opts.Logger,
		Events:         opts.Events,
		Failpoint:      opts.Failpoint,
		Spool:          opts.Spool,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{
				Logger:         opts.Logger,
				SweepInterval:  opts.SweepInterval,
				ChangeInterval: opts.ChangeInterval,
				ReadOnly:       readOnly,
				Submit:         submit,
			})
		},
		// A build with another catalog version than the owner's writes
		// through the spool and fails its reads with the cause.
		OpenDetached: func(ctx context.Context, submit owner.Submitter, cause error) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{
				Logger:   opts.Logger,
				ReadOnly: true,
				Submit:   submit,
				Detached: cause,
			})
		},
	})
}

var _ owner.Target = (*sqlite.Backend)(nil)
