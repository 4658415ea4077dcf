package replica_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// CatchUp is what a host taking a store over runs with the lock and the
// lease held: each spec sets up what the local folder and the replica
// hold, and checks the decision and what is on disk after it.
var _ = Describe("CatchUp", func() {
	var (
		ctx context.Context
		dir string
		url string
		src *source
		dst string
	)
	BeforeEach(func() {
		ctx = context.Background()
		dir = GinkgoT().TempDir()
		url = "file://" + filepath.Join(dir, "replica")
		src = newSource(ctx, dir, url)
		src.round(ctx, 4, "s1")
		dst = filepath.Join(dir, "dst", "records.sqlite")
	})
	catchUp := func(store string) (replica.CatchUpResult, error) {
		return replica.CatchUp(ctx, store, replica.CatchUpOptions{From: url})
	}

	It("restores a missing local file, records its position, and then keeps it while it is the replica's newest state", func() {
		res, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeTrue())
		Expect(res.ReplicaTXID).NotTo(BeZero())
		Expect(res.Restore.TXID).To(Equal(res.ReplicaTXID))
		Expect(metas(ctx, dst)["s1"].HighSeq).To(Equal(int64(4)))

		before := fingerprint(filepath.Dir(sqlite.LivePath(dst)))
		again, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Restored).To(BeFalse())
		Expect(again.LocalTXID).To(Equal(res.ReplicaTXID), "the restore recorded the position it restored")
		Expect(fingerprint(filepath.Dir(sqlite.LivePath(dst)))).To(Equal(before))
	})

	It("replaces a local file the replica is ahead of", func() {
		_, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		src.round(ctx, 3, "s1", "s2") // another host wrote on

		res, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeTrue())
		Expect(res.LocalTXID).To(BeNumerically("<", res.ReplicaTXID))
		Expect(res.Restore.Replaced).To(BeTrue())
		m := metas(ctx, dst)
		Expect(m["s1"].HighSeq).To(Equal(int64(7)))
		Expect(m["s2"].HighSeq).To(Equal(int64(3)))
	})

	It("records the position of a file it replaced even when its context ends as the file is swapped in", func() {
		// An S3 replica: its client gives up on an ended context.
		url = specS3().URL("stores/a")
		src = newSource(ctx, filepath.Join(dir, "s3"), url)
		src.round(ctx, 4, "s1")
		_, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		src.round(ctx, 3, "s1") // another host wrote on

		// Check is the last step before the swap: a store closed at that
		// moment (its promotion cancelled) must still leave the restored
		// file with its position, else every later takeover is refused.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		res, err := replica.CatchUp(cctx, dst, replica.CatchUpOptions{From: url,
			Check: func(context.Context, string) error { cancel(); return nil }})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeTrue())

		again, err := catchUp(dst)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Restored).To(BeFalse())
		Expect(again.LocalTXID).To(Equal(res.ReplicaTXID))
		ents, err := os.ReadDir(filepath.Dir(sqlite.LivePath(dst)))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			Expect(e.Name()).NotTo(ContainSubstring(".position-"), "no staging file is left")
		}
	})

	It("leaves no file for an empty replica, so that the store starts empty", func() {
		res, err := replica.CatchUp(ctx, dst, replica.CatchUpOptions{From: "file://" + filepath.Join(dir, "empty")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeFalse())
		_, err = os.Stat(sqlite.LivePath(dst))
		Expect(err).To(MatchError(os.ErrNotExist))
	})

	It("keeps a local file ahead of the replica along the replica's own history (the replicator ships the rest)", func() {
		// The owner recorded a transaction and died before shipping it:
		// the replica lacks the newest local file.
		src.round(ctx, 1, "s1")
		dropNewest(ctx, dir, url)
		src.close()
		folder := filepath.Dir(src.live)
		before := fingerprint(folder)

		res, err := catchUp(src.store)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeFalse())
		Expect(res.LocalTXID).To(Equal(res.ReplicaTXID + 1))
		Expect(fingerprint(folder)).To(Equal(before))
	})

	It("refuses a local file ahead of a replica whose newest transaction is not the local one with local_ahead, changing nothing", func() {
		src.round(ctx, 1, "s1")
		src.round(ctx, 1, "s1")
		dropNewest(ctx, dir, url)
		src.close()
		// The local file of the replica's newest transaction is gone
		// (the replicator's retention): nothing proves the replica is a
		// prefix of the local file.
		files := level0(ctx, url)
		last := files[len(files)-1]
		Expect(os.Remove(filepath.Join(replica.MetaDir(src.live), "ltx", "0", ltx.FormatFilename(last.MinTXID, last.MaxTXID)))).To(Succeed())
		folder := filepath.Dir(src.live)
		before := fingerprint(folder)

		_, err := catchUp(src.store)
		Expect(err).To(MatchError(replica.ErrLocalAhead))
		Expect(recordstore.Code(err)).To(Equal("local_ahead"))
		Expect(fingerprint(folder)).To(Equal(before))
	})

	It("refuses a local file with no replication position with diverged, changing nothing", func() {
		b, err := sqlite.Open(ctx, dst, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		_, err = b.DeclareKind(ctx, eventKind)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Close()).To(Succeed())
		folder := filepath.Dir(sqlite.LivePath(dst))
		before := fingerprint(folder)

		_, err = catchUp(dst)
		Expect(err).To(MatchError(replica.ErrDiverged))
		Expect(recordstore.Code(err)).To(Equal("diverged"))
		Expect(fingerprint(folder)).To(Equal(before))
	})

	It("refuses a local file whose transaction at its position is not the replica's with diverged", func() {
		// Another store, written the same number of times with other
		// rows, replicated elsewhere: the same position, other content.
		other := newSource(ctx, filepath.Join(dir, "other"), "file://"+filepath.Join(dir, "other-replica"))
		other.round(ctx, 4, "x1")
		Expect(level0(ctx, "file://"+filepath.Join(dir, "other-replica"))).To(HaveLen(len(level0(ctx, url))))
		other.close()
		folder := filepath.Dir(other.live)
		before := fingerprint(folder)

		_, err := catchUp(other.store)
		Expect(err).To(MatchError(replica.ErrDiverged))
		Expect(fingerprint(folder)).To(Equal(before))
	})

	It("without the lease restores only a missing file, and leaves an existing one as it is", func() {
		res, err := replica.CatchUp(ctx, dst, replica.CatchUpOptions{From: url, NoLease: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeTrue())
		src.round(ctx, 2, "s1")
		folder := filepath.Dir(sqlite.LivePath(dst))
		before := fingerprint(folder)
		res, err = replica.CatchUp(ctx, dst, replica.CatchUpOptions{From: url, NoLease: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Restored).To(BeFalse())
		Expect(fingerprint(folder)).To(Equal(before))
	})
})

// dropNewest removes the file replica's newest level-0 file under dir, as
// if it had never been shipped.
func dropNewest(ctx context.Context, dir, url string) {
	files := level0(ctx, url)
	last := files[len(files)-1]
	Expect(os.Remove(filepath.Join(dir, "replica", "ltx", "0", ltx.FormatFilename(last.MinTXID, last.MaxTXID)))).To(Succeed())
}
