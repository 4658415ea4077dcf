package fleet_test

import (
	"context"
	"os"
	"path/filepath"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Restore", func() {
	var (
		ctx  context.Context
		f    *fleet.Fleet
		root string
		acme fleet.Key
		abs  string
		url  string
	)
	appendNotes := func(k fleet.Key, ids ...string) {
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		defer l.Release()
		for _, id := range ids {
			_, err := l.Store().Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": id, "body": "b"}}, owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
	}
	highSeq := func(k fleet.Key) int64 {
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		defer l.Release()
		m, err := l.Store().Backend().Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		return m.HighSeq
	}

	BeforeEach(func() {
		ctx = context.Background()
		root = newRoot()
		f = openFleet(root, fleet.Options{})
		acme = tenant("acme")
		Expect(f.Provision(ctx, acme)).To(Succeed())
		var err error
		abs, err = f.Path(acme)
		Expect(err).NotTo(HaveOccurred())
		url = "file://" + filepath.Join(GinkgoT().TempDir(), "replica", "tenant", "acme")
		client, err := replica.NewClient(url)
		Expect(err).NotTo(HaveOccurred())

		// Replicate the store file while the fleet's owner writes it.
		appendNotes(acme, "1", "2", "3")
		db := litestream.NewDB(abs)
		db.MonitorInterval = 0
		db.Replica = litestream.NewReplicaWithClient(db, client)
		db.Replica.MonitorEnabled = false
		Expect(db.Open()).To(Succeed())
		Expect(db.SyncAndWait(ctx)).To(Succeed())
		appendNotes(acme, "4", "5")
		Expect(db.SyncAndWait(ctx)).To(Succeed())
		Expect(db.Close(ctx)).To(Succeed())
	})

	It("rebuilds a deleted store, and replaces one only with Force, closing it in this process first", func() {
		_, err := f.Restore(ctx, acme, fleet.RestoreOptions{From: url})
		Expect(err).To(MatchError(replica.ErrExists))
		Expect(recordstore.Code(err)).To(Equal("exists"))

		appendNotes(acme, "6") // the store is open in this fleet now
		res, err := f.Restore(ctx, acme, fleet.RestoreOptions{From: url, Force: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Replaced).To(BeTrue())
		Expect(res.LiveFile).To(Equal(abs))
		Expect(highSeq(acme)).To(Equal(int64(5)))

		Expect(f.Delete(ctx, acme)).To(Succeed())
		_, err = f.Restore(ctx, acme, fleet.RestoreOptions{From: url})
		Expect(err).NotTo(HaveOccurred())
		Expect(highSeq(acme)).To(Equal(int64(5)))
		fi, err := os.Stat(abs)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("refuses another key's replica (misplaced) and a store another process owns (in_use), changing nothing", func() {
		beta := tenant("beta")
		_, err := f.Restore(ctx, beta, fleet.RestoreOptions{From: url})
		Expect(err).To(MatchError(replica.ErrCheckFailed))
		Expect(err).To(MatchError(fleet.ErrMisplaced))
		Expect(err.Error()).To(ContainSubstring("records key tenant:acme, not tenant:beta"))
		betaPath, err := f.Path(beta)
		Expect(err).NotTo(HaveOccurred())
		Expect(betaPath).NotTo(BeAnExistingFile())

		// Another fleet on the root owns the store now (its own flock, as
		// another process's would be).
		Expect(f.Close()).To(Succeed())
		other := openFleet(root, fleet.Options{})
		l, err := other.Acquire(ctx, acme)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		_, err = l.Store().Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "9"}}, owner.AppendOptions{})
		Expect(err).NotTo(HaveOccurred()) // the first write elects it the owner
		f = openFleet(root, fleet.Options{})
		before, err := os.ReadFile(abs)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.Restore(ctx, acme, fleet.RestoreOptions{From: url, Force: true})
		Expect(err).To(MatchError(replica.ErrInUse))
		Expect(recordstore.Code(err)).To(Equal("in_use"))
		after, err := os.ReadFile(abs)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before))
	})
})
