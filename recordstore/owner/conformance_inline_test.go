// The exactly-once conformance suite of recordstoretest over the fast
// path: every batch the suite applies travels as an inline batch over the
// control socket of an owner Store (ActionAppend) — decoded, group
// committed, synced and answered by the owner — instead of being handed to
// the SQLite backend directly.

package owner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

var _ = rt.DescribeBatchAppender("batch conformance over the fast path", rt.BatchHarness{
	Open:   openInlineConformance,
	Reopen: reopenInlineConformance,
	Epoch:  func(b recordstore.Backend) int64 { return b.(*inlineBackend).Epoch() },
})

// inlineBackend is the SQLite backend of an owner Store whose AppendBatch
// sends each batch over the Store's control socket. The suite's batch ids
// are not spool ids (32 hex digits): each is sent under one made from it
// (wireID), and the results carry the suite's id again. A batch the wire
// cannot carry (see AppendBatch) is applied by the backend directly, under
// its wire id too: a producer could not send it either.
type inlineBackend struct {
	*sqlite.Backend
	st     *sqliteStore
	path   string
	sock   string
	closed bool
}

// wireIDs maps wire ids back to the suite's ids, across reopens.
var wireIDs sync.Map

// wireID is the spool id batch id travels under.
func wireID(id string) string {
	sum := sha256.Sum256([]byte(id))
	w := hex.EncodeToString(sum[:16])
	wireIDs.Store(w, id)
	return w
}

// suiteID is the suite's id of a result's wire id.
func suiteID(res recordstore.BatchResult) recordstore.BatchResult {
	if id, ok := wireIDs.Load(res.ID); ok {
		res.ID = id.(string)
	}
	return res
}

func openInlineConformance(ctx context.Context, clock *rt.Clock) (recordstore.Backend, error) {
	return openInlineAt(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), clock)
}

func reopenInlineConformance(ctx context.Context, clock *rt.Clock, b recordstore.Backend) (recordstore.Backend, error) {
	ib, ok := b.(*inlineBackend)
	if !ok {
		return nil, fmt.Errorf("reopen: not an *inlineBackend but %T", b)
	}
	if err := ib.Close(); err != nil {
		return nil, fmt.Errorf("reopen: close: %w", err)
	}
	return openInlineAt(ctx, ib.path, clock)
}

// openInlineAt opens the store at path as its owner in this process, its
// backend on the suite's clock, with no background sweep.
func openInlineAt(ctx context.Context, path string, clock *rt.Clock) (*inlineBackend, error) {
	st, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1, Now: clock.Now,
				Logger: slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		},
		GCInterval: 24 * time.Hour, LedgerRetention: 24 * 365 * 24 * time.Hour,
	})
	if err != nil {
		return nil, err
	}
	state, err := owner.ReadState(owner.PathsFor(path).State)
	if err != nil {
		return nil, err
	}
	return &inlineBackend{Backend: st.Backend(), st: st, path: path, sock: state.Socket}, nil
}

// Close closes the owner Store (and with it the backend).
func (b *inlineBackend) Close() error {
	b.closed = true
	return b.st.Close()
}

// AppendBatch sends the batches one by one over the socket, in order,
// when the wire can carry every one of them. A call it cannot carry whole
// — a batch without an id, with a Failure or Retry, with rows from a
// Source, one a manifest refuses — and every call after Close go to the
// backend directly, as one call: the suite's specs of such calls are about
// the backend's whole-call contract, which no producer's single batch
// meets on the wire.
func (b *inlineBackend) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	wire := make([]recordstore.Batch, len(batches))
	datas := make([][]byte, len(batches))
	direct := b.closed
	for i, batch := range batches {
		if batch.ID != "" {
			batch.ID = wireID(batch.ID)
		}
		wire[i] = batch
		if data, err := inlineable(ctx, batch); err == nil && batch.ID != "" {
			datas[i] = data
		} else {
			direct = true
		}
	}
	out := make([]recordstore.BatchResult, len(batches))
	if direct {
		rs, err := b.Backend.AppendBatch(ctx, wire...)
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			out[i] = suiteID(r)
		}
		return out, nil
	}
	for i, data := range datas {
		res, err := b.send(ctx, data)
		if err != nil {
			return nil, err
		}
		out[i] = suiteID(res)
	}
	return out, nil
}

// inlineable encodes batch for the wire, or fails when the wire cannot
// carry it.
func inlineable(ctx context.Context, batch recordstore.Batch) ([]byte, error) {
	if batch.Failure != nil || batch.Retry {
		return nil, fmt.Errorf("a manifest carries no failure and no retry mark")
	}
	return spool.EncodeInline(ctx, &batch, spool.Limits{})
}

// send is one append request and its answer.
func (b *inlineBackend) send(ctx context.Context, data []byte) (recordstore.BatchResult, error) {
	resp, err := owner.Call(ctx, b.sock, owner.Request{Action: owner.ActionAppend, Batch: data})
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	if len(resp.Results) != 1 || !resp.Results[0].Done || resp.Results[0].Result == nil {
		return recordstore.BatchResult{}, fmt.Errorf("the owner's answer has no result: %+v", resp.Results)
	}
	return *resp.Results[0].Result, nil
}

// BatchOutcome reads the ledger under the batch's wire id.
func (b *inlineBackend) BatchOutcome(ctx context.Context, id string) (recordstore.BatchResult, error) {
	res, err := b.Backend.BatchOutcome(ctx, wireID(id))
	return suiteID(res), err
}
