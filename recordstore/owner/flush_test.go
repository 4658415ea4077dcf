// Specs for the move of applied batches out of incoming/: only after the
// backend's Sync, so that a power loss undoing unsynced commits finds the
// batches still in the spool.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// gatedBackend is the SQLite backend whose Sync waits for the gate and
// may fail with failWith instead of syncing.
type gatedBackend struct {
	*sqlite.Backend
	gate     chan struct{}
	calls    atomic.Int64
	failWith atomic.Pointer[error]
}

func (g *gatedBackend) Sync(ctx context.Context) error {
	g.calls.Add(1)
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := g.failWith.Load(); err != nil {
		return *err
	}
	return g.Backend.Sync(ctx)
}

// openGated opens the store here as owner over a gated backend.
func openGated(path string, gate chan struct{}) (*owner.Store[*gatedBackend], *gatedBackend) {
	GinkgoHelper()
	var g *gatedBackend
	s, err := owner.Open(context.Background(), owner.Options[*gatedBackend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion,
		PollMin: 5 * time.Millisecond, PollMax: 50 * time.Millisecond, DrainOnClose: 2 * time.Second,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*gatedBackend, error) {
			b, err := sqliteOpener(path)(ctx, readOnly, submit)
			if err != nil {
				return nil, err
			}
			g = &gatedBackend{Backend: b, gate: gate}
			return g, nil
		},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(s.Role()).To(Equal(owner.RoleOwner))
	return s, g
}

// eventBatch is a one-row append of key k to stream s.
func eventBatch(k string) recordstore.Batch {
	kind := eventKind()
	vals, err := kind.Normalize(recordstore.Row{"k": k})
	Expect(err).NotTo(HaveOccurred())
	return recordstore.Batch{Schemas: []recordstore.Kind{*kind},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: kind.Name, Rows: []recordstore.Values{vals}}}}
}

func incomingIDs(path string) []string {
	GinkgoHelper()
	var ids []string
	for _, n := range incoming(path) {
		ids = append(ids, n.ID)
	}
	return ids
}

var _ = Describe("applied batches leave incoming/ only after the backend's Sync", func() {
	It("keeps a committed batch in incoming/ until Sync returns, then moves it to trash/", func(ctx SpecContext) {
		path := storePath()
		gate := make(chan struct{})
		s, g := openGated(path, gate)
		id, err := s.Publish(ctx, eventBatch("a"))
		Expect(err).NotTo(HaveOccurred())
		res, err := s.Await(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))

		Eventually(g.calls.Load, wait, 5*time.Millisecond).Should(BeNumerically(">=", 1), "the idle owner syncs")
		Expect(incomingIDs(path)).To(Equal([]string{id}), "while Sync has not returned, the folder is the batch's durable copy")
		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Backlog).To(BeZero(), "an applied batch is not backlog")
		l, ok, err := owner.ReadSpool(ctx, path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue(), "the owner answers over its socket")
		Expect(l.Incoming).To(HaveLen(1))
		Expect(l.Incoming[0].Batch).To(HaveSuffix(id))
		Expect(l.Incoming[0].Applied).To(BeTrue(), "the spool listing says the folder is an applied batch's")

		close(gate)
		Eventually(func() []string { return incomingIDs(path) }, wait, 5*time.Millisecond).Should(BeEmpty())
		Expect(entries(path, spool.StateTrash)).To(HaveLen(1))
		Expect(s.Close()).To(Succeed())
	})

	It("stops the writer when Sync's fsync fails: batches stay in incoming/ and the next owner applies each once", func(ctx SpecContext) {
		path := storePath()
		gate := make(chan struct{})
		close(gate)
		s, g := openGated(path, gate)
		bad := fmt.Errorf("%w: records.sqlite-wal: input/output error", fsutil.ErrSync)
		g.failWith.Store(&bad)
		first, err := s.Publish(ctx, eventBatch("a"))
		Expect(err).NotTo(HaveOccurred())
		_, err = s.Await(ctx, first)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string {
			st, _ := s.Status(ctx)
			return st.LastError
		}, wait, 5*time.Millisecond).Should(ContainSubstring("input/output error"))

		second, err := s.Publish(ctx, eventBatch("b"))
		Expect(err).NotTo(HaveOccurred())
		actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = s.Await(actx, second)
		cancel()
		var pe *owner.PendingError
		Expect(errors.As(err, &pe)).To(BeTrue(), "a stopped writer applies nothing more: %v", err)
		Expect(pe.BatchID).To(Equal(second))
		Expect(errors.Is(err, owner.ErrPending)).To(BeTrue())
		Expect(recordstore.Code(err)).To(Equal("pending"))
		Expect(err.Error()).To(ContainSubstring(second))
		Expect(incomingIDs(path)).To(ConsistOf(first, second))
		l, ok, err := owner.ReadSpool(ctx, path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(l.Incoming).To(ContainElement(And(
			HaveField("Batch", HaveSuffix(second)), HaveField("Applied", BeFalse()))), "a batch still to be applied")
		Expect(errors.Is(s.Close(), fsutil.ErrSync)).To(BeTrue())
		Expect(incomingIDs(path)).To(ConsistOf(first, second))

		next := openHere(path)
		Eventually(func() []string { return incomingIDs(path) }, wait, 5*time.Millisecond).Should(BeEmpty())
		for _, id := range []string{first, second} {
			out, err := next.Backend().BatchOutcome(ctx, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Outcome).To(Equal(recordstore.OutcomeCommitted))
		}
		recs, err := next.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recordKeys(recs)).To(Equal([]string{"a", "b"}), "each applied once")
	})
})
