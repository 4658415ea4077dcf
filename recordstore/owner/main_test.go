// TestMain: this package's test binary doubles as the multi-process
// harness's child, whose store is an owner.Store over the SQLite backend.

package owner_test

import (
	"context"
	"os"
	"testing"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest"
)

func TestMain(m *testing.M) {
	recordstoretest.RunChild(openChildStore)
	os.Exit(m.Run())
}

// openChildStore opens the store at path in a child process.
func openChildStore(ctx context.Context, path string, o recordstoretest.ChildOptions) (recordstoretest.ChildStore, error) {
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
