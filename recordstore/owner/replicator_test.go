// The owner's use of its Replicator, with a recording one: started with
// the live file when the process becomes the owner, waited on for
// WriteOptions.Replicated, stopped on Close after the final drain and
// while the lock is still held.

package owner_test

import (
	"context"
	"errors"
	"os"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// recordingReplicator records the calls the owner makes; Stop notes
// whether the owner's state file is still there (the owner removes it
// just before it lets go of the lock).
type recordingReplicator struct {
	statePath string
	waitErr   error

	mu          sync.Mutex
	calls       []string
	live        string
	ownedAtStop bool
}

func (r *recordingReplicator) Start(_ context.Context, live string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.live = append(r.calls, "start"), live
	return nil
}

func (r *recordingReplicator) Wait(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "wait")
	return r.waitErr
}

func (r *recordingReplicator) Stop(context.Context) error {
	_, err := os.Stat(r.statePath)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.ownedAtStop = append(r.calls, "stop"), err == nil
	return nil
}

func (r *recordingReplicator) Status() owner.ReplicaStatus {
	return owner.ReplicaStatus{Target: "rec://", Running: true, ReplicaTXID: 7}
}

func (r *recordingReplicator) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

var _ = Describe("the owner's replicator", func() {
	It("starts with the live file as the process becomes the owner, serves waits, and stops before the lock goes", func() {
		path := storePath()
		rep := &recordingReplicator{statePath: owner.PathsFor(path).State}
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion, StartWait: wait, Replica: rep,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Expect(rep.seen()).To(Equal([]string{"start"}))
		Expect(rep.live).To(Equal(s.Backend().LivePath()))

		ctx := context.Background()
		_, err = s.DeclareKinds(ctx, []recordstore.Kind{*eventKind()}, owner.WriteOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "a"}}, owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.seen()).To(Equal([]string{"start", "wait"}))

		rep.waitErr = errors.New("replica unreachable")
		_, err = s.Append(ctx, "e", "event", []recordstore.Row{{"k": "b"}}, owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
		var nre *owner.NotReplicatedError
		Expect(errors.As(err, &nre)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal("not_replicated"))
		recs, err := s.Backend().Scan(ctx, "e", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(2), "the append whose wait failed stays applied")

		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Replica).NotTo(BeNil())
		Expect(st.Replica.ReplicaTXID).To(Equal(uint64(7)))

		_, err = s.Rotate(ctx, path+".next")
		Expect(errors.Is(err, recordstore.ErrUnsupported)).To(BeTrue(), "%v", err)

		Expect(s.Close()).To(Succeed())
		Expect(rep.seen()).To(Equal([]string{"start", "wait", "wait", "stop"}))
		Expect(rep.ownedAtStop).To(BeTrue(), "Stop ran while the process still owned the store")
	})

	It("is not asked to wait when the owner runs none: the write is not_replicated, and applied", func() {
		path := storePath()
		s := openInProcess(path, nil)
		ctx := context.Background()
		_, err := s.DeclareKinds(ctx, []recordstore.Kind{*eventKind()}, owner.WriteOptions{Replicated: true})
		Expect(errors.Is(err, owner.ErrNotReplicating)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal("not_replicated"))
		_, err = s.Backend().Kind(ctx, "event")
		Expect(err).NotTo(HaveOccurred(), "the declaration stays")
	})
})
