package replica_test

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Verify", func() {
	var (
		ctx     context.Context
		dir     string
		scratch string
	)
	BeforeEach(func() {
		ctx = context.Background()
		dir = GinkgoT().TempDir()
		scratch = filepath.Join(dir, "scratch")
		Expect(os.Mkdir(scratch, 0o700)).To(Succeed())
	})

	It("passes a replica in step with the live store, and reports a stream that moved on as a mismatch (S3)", func() {
		url := specS3().URL("stores/v")
		src := newSource(ctx, dir, url)
		src.round(ctx, 6, "s1", "s2")

		rep, err := replica.Verify(ctx, src.store, replica.VerifyOptions{Replica: url, Scratch: scratch})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Streams).To(Equal(2))
		Expect(rep.Diffs).To(BeEmpty())
		Expect(rep.TXID).NotTo(BeZero())

		By("rows the replica has not received")
		_, err = src.b.Append(ctx, "s2", eventKind.Name, []recordstore.Row{{"n": int64(1)}})
		Expect(err).NotTo(HaveOccurred())
		_, err = src.b.Append(ctx, "s3", eventKind.Name, []recordstore.Row{{"n": int64(1)}})
		Expect(err).NotTo(HaveOccurred())
		rep, err = replica.Verify(ctx, src.store, replica.VerifyOptions{Replica: url, Scratch: scratch})
		Expect(err).To(MatchError(replica.ErrMismatch))
		Expect(recordstore.Code(err)).To(Equal("mismatch"))
		Expect(rep.Diffs).To(ConsistOf(
			replica.StreamDiff{Stream: "s2", LiveHighSeq: 7, ReplicaHighSeq: 6, LiveRows: 7, ReplicaRows: 6},
			replica.StreamDiff{Stream: "s3", LiveHighSeq: 1, LiveRows: 1, Missing: "replica"},
		))
		Expect(err.Error()).To(ContainSubstring("stream s2: high seq 7 live, 6 replica"))

		By("once shipped, it matches again")
		Expect(src.db.SyncAndWait(ctx)).To(Succeed())
		_, err = replica.Verify(ctx, src.store, replica.VerifyOptions{Replica: url, Scratch: scratch})
		Expect(err).NotTo(HaveOccurred())
		entries, err := os.ReadDir(scratch)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty(), "the scratch folder is removed")
	})

	It("refuses a replica with a hole, and a store with no live file", func() {
		url := "file://" + filepath.Join(dir, "replica")
		src := newSource(ctx, dir, url)
		src.round(ctx, 2, "s1")
		src.round(ctx, 2, "s1")
		src.round(ctx, 2, "s1")
		files := level0(ctx, url)
		client, err := replica.NewClient(url)
		Expect(err).NotTo(HaveOccurred())
		Expect(client.DeleteLTXFiles(ctx, files[1:2])).To(Succeed())
		_, err = replica.Verify(ctx, src.store, replica.VerifyOptions{Replica: url, Scratch: scratch})
		Expect(err).To(MatchError(replica.ErrGap))

		_, err = replica.Verify(ctx, filepath.Join(dir, "none", "records.sqlite"), replica.VerifyOptions{Replica: url, Scratch: scratch})
		Expect(err).To(MatchError(recordstore.ErrNotFound))
	})
})
