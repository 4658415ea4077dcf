package fleet_test

import (
	"context"
	"path/filepath"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("VerifySample and RunVerifier", func() {
	var (
		ctx      context.Context
		f        *fleet.Fleet
		repRoot  string
		replicaF func(fleet.Key) (string, error)
	)
	appendNote := func(k fleet.Key, id string) {
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		defer l.Release()
		_, err = l.Store().Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": id}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
	BeforeEach(func() {
		ctx = context.Background()
		f = openFleet(newRoot(), fleet.Options{})
		repRoot = "file://" + filepath.Join(GinkgoT().TempDir(), "replicas")
		replicaF = func(k fleet.Key) (string, error) { return fleet.ReplicaAddress(repRoot, k) }
		for _, id := range []string{"a1", "b2", "c3"} {
			k := tenant(id)
			Expect(f.Provision(ctx, k)).To(Succeed())
			appendNote(k, "1")
			addr, err := replicaF(k)
			Expect(err).NotTo(HaveOccurred())
			Expect(addr).To(HaveSuffix("/replicas/tenant/" + id))
			client, err := replica.NewClient(addr)
			Expect(err).NotTo(HaveOccurred())
			abs, err := f.Path(k)
			Expect(err).NotTo(HaveOccurred())
			db := litestream.NewDB(abs)
			db.MonitorInterval = 0
			db.Replica = litestream.NewReplicaWithClient(db, client)
			db.Replica.MonitorEnabled = false
			Expect(db.Open()).To(Succeed())
			Expect(db.SyncAndWait(ctx)).To(Succeed())
			Expect(db.Close(ctx)).To(Succeed())
		}
		appendNote(tenant("c3"), "2") // never shipped
	})

	It("verifies a sample, each store with its own outcome", func() {
		out, err := f.VerifySample(ctx, 10, replicaF, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HaveLen(3))
		codes := map[string]string{}
		for _, o := range out {
			codes[o.Key] = o.Code
		}
		Expect(codes).To(Equal(map[string]string{"tenant:a1": "", "tenant:b2": "", "tenant:c3": "mismatch"}))

		out, err = f.VerifySample(ctx, 2, replicaF, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HaveLen(2))
	})

	It("runs rounds on its schedule until its context ends", func() {
		rounds := make(chan []fleet.VerifyOutcome, 16)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- f.RunVerifier(rctx, fleet.VerifySchedule{
				Every: 10 * time.Millisecond, Sample: 1, ReplicaFor: replicaF,
				Report: func(o []fleet.VerifyOutcome) {
					select {
					case rounds <- o:
					default: // the spec has seen enough rounds
					}
				},
			})
		}()
		for range 2 {
			var o []fleet.VerifyOutcome
			Eventually(rounds).WithTimeout(time.Minute).Should(Receive(&o))
			Expect(o).To(HaveLen(1))
		}
		cancel()
		Eventually(done).WithTimeout(time.Minute).Should(Receive(MatchError(context.Canceled)))
		Expect(f.RunVerifier(ctx, fleet.VerifySchedule{})).To(MatchError(recordstore.ErrInvalid))
	})
})
