// TestMain: this package's test binary doubles as the multi-process
// harness's child, whose store is an owner.Store over the SQLite backend.

package owner_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
	"github.com/fb46ecde/records/recordstoretest"
)

func TestMain(m *testing.M) {
	owner.RunListenChild()
	recordstoretest.RunChild(openChildStore)
	os.Exit(m.Run())
}

// openChildStore opens the store at path in a child process.
func openChildStore(ctx context.Context, path string, o recordstoretest.ChildOptions) (recordstoretest.ChildStore, error) {
	if o.LiveFile != "" {
		opts := recordstoretest.OwnerOptions(path, o, callerNamedOpener(path, o.LiveFile, o.CarryFrom))
		opts.CatalogVersion = sqlite.CatalogVersion
		opts.NoPromotion = true
		s, err := owner.Open(ctx, opts)
		if err != nil {
			return nil, err
		}
		return recordstoretest.OwnerChild(s), nil
	}
	opts := recordstoretest.OwnerOptions(path, o, sqliteOpener(path))
	opts.CatalogVersion = sqlite.CatalogVersion
	s, err := owner.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	return recordstoretest.OwnerChild(s), nil
}

// sqliteStore is a Store over the SQLite backend alone, as the specs of a
// store of this build's catalog version open it.
type sqliteStore = owner.Store[*sqlite.Backend]

// sqliteOpener opens the SQLite backend of the store at path, writable for
// the owner and read-only (submitting through the owner) for the others.
// Retention sweeps are off: no spec needs them and they would only add
// writes.
func sqliteOpener(path string) func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
	return func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
		return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1})
	}
}

// callerNamed is the backend of a store with caller-named live files: the
// owner's *sqlite.Backend, or a non-owner's *submitonly.Backend.
type callerNamed interface{ owner.Target }

// callerNamedStore is a Store of caller-named live files.
type callerNamedStore = owner.Store[callerNamed]

// errSubmitOnly is why a non-owner of a caller-named store reads nothing.
var errSubmitOnly = errors.New("caller-named live file: this process writes through the spool only")

// callerNamedOpener opens the owner's backend on the live file live,
// carrying the ledger of carry, and a non-owner's submit-only (see
// docs/multi-process.md, "Caller-named live files").
func callerNamedOpener(path, live string, carry []string) func(ctx context.Context, readOnly bool, submit owner.Submitter) (callerNamed, error) {
	return func(ctx context.Context, readOnly bool, submit owner.Submitter) (callerNamed, error) {
		if readOnly {
			return submitonly.Open(path, submitonly.Options{Cause: errSubmitOnly, Submit: submit, CheckKind: func(k recordstore.Kind) error { return sqlite.CheckKindName(k.Name) }})
		}
		return sqlite.Open(ctx, path, sqlite.Options{LiveFile: live, CarryFrom: carry, SweepInterval: -1})
	}
}
