// Opening the store named by --store for the length of one command.

package cli

import (
	"context"
	"log/slog"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// withStore opens the store with opts, runs fn on it and closes it. A
// failure to close is reported when fn itself succeeded. Errors of the
// backend are passed on as they are: they already say what was being done.
func (a *app) withStore(ctx context.Context, opts sqlite.Options, fn func(recordstore.Backend) error) (err error) {
	if a.storePath == "" {
		return usagef("--store must not be empty")
	}
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

// quietly opens the store for a command that does one thing and exits: only
// warnings and errors are logged (unless --log-level says otherwise) and no
// background retention sweeper is started; retention is the job of the
// process that holds the store (query serve).
func (a *app) quietly(ctx context.Context, fn func(recordstore.Backend) error) error {
	opts := sqlite.Options{Logger: a.logger(slog.LevelWarn), SweepInterval: -1}
	return a.withStore(ctx, opts, fn)
}
