// Runs the shared conformance suites of recordstoretest (the Backend
// contract and the BatchAppender contract) against the SQLite backend: a
// fresh store in a temporary folder per spec, driven by the suite's fake
// clock, with the background sweeper off.

package sqlite_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest"
)

// conformanceOptions are the options every conformance store opens with.
func conformanceOptions(clock *recordstoretest.Clock) sqlite.Options {
	return sqlite.Options{
		Logger:        slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Now:           clock.Now,
		SweepInterval: -1, // the suite calls Sweep itself
	}
}

var _ = recordstoretest.DescribeBackend("sqlite.Backend conformance", recordstoretest.Harness{
	Open:   openConformance,
	Reopen: reopenConformance,
})

var _ = recordstoretest.DescribeBatchAppender("sqlite.Backend batch conformance", recordstoretest.BatchHarness{
	Open:   openConformance,
	Reopen: reopenConformance,
	Epoch:  func(b recordstore.Backend) int64 { return b.(*sqlite.Backend).Epoch() },
})

// The Backend suite again, on bound kinds: every kind it declares is bound
// to a table created from its columns (recordstoretest.BindTable), one kind
// and table per stream.
var _ = recordstoretest.DescribeBackend("sqlite.Backend conformance on bound kinds", recordstoretest.Harness{
	Open:   openConformance,
	Reopen: reopenConformance,
	Bind:   recordstoretest.BindTable,
})

// The batch suite again, on bound kinds: every kind it declares is bound
// to a table created from its columns (recordstoretest.BindTable), one kind
// and table per stream.
var _ = recordstoretest.DescribeBatchAppender("sqlite.Backend batch conformance on bound kinds", recordstoretest.BatchHarness{
	Open:   openConformance,
	Reopen: reopenConformance,
	Epoch:  func(b recordstore.Backend) int64 { return b.(*sqlite.Backend).Epoch() },
	Bind:   recordstoretest.BindTable,
})

// reopenConformance closes a conformance store and opens it again.
func reopenConformance(ctx context.Context, clock *recordstoretest.Clock, b recordstore.Backend) (recordstore.Backend, error) {
	sb, ok := b.(*sqlite.Backend)
	if !ok {
		return nil, fmt.Errorf("reopen: not a *sqlite.Backend but %T", b)
	}
	if err := sb.Close(); err != nil {
		return nil, fmt.Errorf("reopen: close: %w", err)
	}
	return sqlite.Open(ctx, sb.Path(), conformanceOptions(clock))
}

// openConformance opens a fresh conformance store in a temporary folder.
func openConformance(ctx context.Context, clock *recordstoretest.Clock) (recordstore.Backend, error) {
	path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
	return sqlite.Open(ctx, path, conformanceOptions(clock))
}
