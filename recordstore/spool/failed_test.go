// Moving batches to failed/ with error.json, retrying them, trashing them,
// and GC.

package spool_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("failed batches", func() {
	var (
		ctx  context.Context
		d    *spool.Dir
		name string
		now  time.Time
	)
	BeforeEach(func() {
		ctx = context.Background()
		now = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		d = newDir(spool.Options{Now: func() time.Time { return now }})
		n, err := d.Publish(ctx, sampleBatch(spool.NewIdentity(""), normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		name = n.String()
	})

	It("moves a batch to failed with error.json naming the reason and time", func() {
		reason := &spool.ValidationError{Batch: name, Reason: spool.ErrChecksum}
		Expect(d.MoveToFailed(ctx, name, reason)).To(Succeed())
		expectEmpty(d, spool.StateIncoming)
		failed, err := d.List(ctx, spool.StateFailed)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(failed)).To(Equal([]string{name}))

		f, err := d.ReadFailure(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Batch).To(Equal(name))
		Expect(f.Code).To(Equal("invalid"))
		Expect(f.Error).To(ContainSubstring("checksum mismatch"))
		Expect(f.FailedAt.Equal(now)).To(BeTrue())
		Expect(f.Format).To(Equal(1))

		// the failed batch itself still loads: error.json is not part of it
		_, err = d.Load(ctx, spool.StateFailed, name)
		Expect(err).NotTo(HaveOccurred())
	})

	It("retries a failed batch: back in incoming, without error.json, with a retry mark holding the failure", func() {
		Expect(d.MoveToFailed(ctx, name, recordstore.ErrCapacity)).To(Succeed())
		failure, err := d.ReadFailure(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		marked, err := d.RetryMarked(ctx, spool.StateFailed, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(marked).To(BeFalse())
		now = now.Add(time.Hour)
		Expect(d.Retry(ctx, name)).To(Succeed())
		expectEmpty(d, spool.StateFailed)
		folder := d.Path(spool.StateIncoming, name)
		_, err = os.Stat(filepath.Join(folder, spool.ErrorFile))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())

		info, err := os.Stat(filepath.Join(folder, spool.RetryFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		data, err := os.ReadFile(filepath.Join(folder, spool.RetryFile))
		Expect(err).NotTo(HaveOccurred())
		var mark spool.RetryMark
		Expect(json.Unmarshal(data, &mark)).To(Succeed())
		Expect(mark).To(Equal(spool.RetryMark{Format: 1, Batch: name, RetriedAt: now, Previous: failure}))
		marked, err = d.RetryMarked(ctx, spool.StateIncoming, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(marked).To(BeTrue())

		b, err := d.Load(ctx, spool.StateIncoming, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Retried).To(BeTrue())
		Expect(b.Verify(ctx)).To(Succeed())
	})

	It("does not take a retry mark that is not a plain file, and a fresh batch has none", func() {
		b, err := d.Load(ctx, spool.StateIncoming, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Retried).To(BeFalse())
		Expect(os.Mkdir(filepath.Join(d.Path(spool.StateIncoming, name), spool.RetryFile), 0o700)).To(Succeed())
		b, err = d.Load(ctx, spool.StateIncoming, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Retried).To(BeFalse())
	})

	It("fails again after a retry, keeping the newest error.json and dropping the retry mark", func() {
		Expect(d.MoveToFailed(ctx, name, errors.New("first"))).To(Succeed())
		Expect(d.Retry(ctx, name)).To(Succeed())
		// a stale copy of the same batch in failed/ (a crash between steps)
		Expect(os.MkdirAll(d.Path(spool.StateFailed, name), 0o700)).To(Succeed())
		Expect(d.MoveToFailed(ctx, name, errors.New("second"))).To(Succeed())
		f, err := d.ReadFailure(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Error).To(Equal("second"))
		Expect(f.Code).To(Equal(recordstore.CodeInternal))
		_, err = os.Stat(filepath.Join(d.Path(spool.StateFailed, name), spool.RetryFile))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue(), "the retry mark is gone")
		trash, err := os.ReadDir(d.Path(spool.StateTrash, ""))
		Expect(err).NotTo(HaveOccurred())
		Expect(trash).To(HaveLen(1), "the stale copy went to trash")
	})

	It("moves a stray file to failed as is, and refuses path tricks", func() {
		Expect(os.WriteFile(d.Path(spool.StateIncoming, "junk"), []byte("x"), 0o600)).To(Succeed())
		Expect(d.MoveToFailed(ctx, "junk", errors.New("not a batch"))).To(Succeed())
		_, err := d.ReadFailure(ctx, "junk")
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue(), "a stray file has no error.json: %v", err)
		for _, bad := range []string{"", ".", "..", "../x", "a/b"} {
			Expect(d.MoveToFailed(ctx, bad, nil)).To(MatchError(spool.ErrUnsafePath), bad)
			Expect(d.Retry(ctx, bad)).To(MatchError(spool.ErrUnsafePath), bad)
		}
	})

	It("refuses to retry over a batch already in incoming", func() {
		Expect(d.MoveToFailed(ctx, name, errors.New("x"))).To(Succeed())
		Expect(os.MkdirAll(d.Path(spool.StateIncoming, name), 0o700)).To(Succeed())
		Expect(d.Retry(ctx, name)).To(MatchError(fs.ErrExist))
	})

	It("trashes an ingested batch, twice under the same name", func() {
		Expect(d.MoveToTrash(ctx, spool.StateIncoming, name)).To(Succeed())
		Expect(os.MkdirAll(d.Path(spool.StateIncoming, name), 0o700)).To(Succeed())
		Expect(d.MoveToTrash(ctx, spool.StateIncoming, name)).To(Succeed())
		trash, err := os.ReadDir(d.Path(spool.StateTrash, ""))
		Expect(err).NotTo(HaveOccurred())
		Expect(trash).To(HaveLen(2))
		expectEmpty(d, spool.StateIncoming)
	})
})

var _ = Describe("GC", func() {
	var (
		ctx context.Context
		d   *spool.Dir
		now time.Time
	)
	BeforeEach(func() {
		ctx = context.Background()
		now = time.Now()
		d = newDir(spool.Options{Now: func() time.Time { return now }})
	})

	mk := func(s spool.State, name string, age time.Duration) {
		GinkgoHelper()
		p := d.Path(s, name)
		Expect(os.MkdirAll(p, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o600)).To(Succeed())
		t := now.Add(-age)
		Expect(os.Chtimes(p, t, t)).To(Succeed())
	}

	It("removes old tmp and failed entries and all of trash, and says what", func() {
		mk(spool.StateTmp, "old-tmp", 25*time.Hour)
		mk(spool.StateTmp, "young-tmp", time.Hour)
		mk(spool.StateFailed, "old-failed", 31*24*time.Hour)
		mk(spool.StateFailed, "young-failed", 29*24*time.Hour)
		mk(spool.StateTrash, "t1", 0)
		mk(spool.StateTrash, "t2", time.Hour)
		mk(spool.StateIncoming, "old-incoming", 365*24*time.Hour)

		res, err := d.GC(ctx, spool.GCOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Tmp).To(Equal([]string{"old-tmp"}))
		Expect(res.Failed).To(Equal([]string{"old-failed"}))
		Expect(res.Trash).To(ConsistOf("t1", "t2"))
		for _, left := range []string{d.Path(spool.StateTmp, "young-tmp"), d.Path(spool.StateFailed, "young-failed"), d.Path(spool.StateIncoming, "old-incoming")} {
			Expect(left).To(BeADirectory())
		}
		expectEmpty(d, spool.StateTrash)
	})

	DescribeTable("removes tmp folders left prepared and unused after PreparedAge, and nothing else sooner than TmpAge",
		func(files map[string]string, age time.Duration, removed bool) {
			p := d.Path(spool.StateTmp, "0123456789abcdef-prepared")
			Expect(os.MkdirAll(p, 0o700)).To(Succeed())
			for name, content := range files {
				Expect(os.WriteFile(filepath.Join(p, name), []byte(content), 0o600)).To(Succeed())
			}
			t := now.Add(-age)
			Expect(os.Chtimes(p, t, t)).To(Succeed())
			res, err := d.GC(ctx, spool.GCOptions{})
			Expect(err).NotTo(HaveOccurred())
			if removed {
				Expect(res.Tmp).To(Equal([]string{"0123456789abcdef-prepared"}))
				Expect(p).NotTo(BeADirectory())
			} else {
				Expect(res.Tmp).To(BeEmpty())
				Expect(p).To(BeADirectory())
			}
		},
		Entry("prepared, 11 minutes old", map[string]string{spool.ManifestFile: "", "e00001.ndjson": ""}, 11*time.Minute, true),
		Entry("prepared for gzip, 11 minutes old", map[string]string{spool.ManifestFile: "", "e00001.ndjson.gz": ""}, 11*time.Minute, true),
		Entry("prepared, 5 minutes old", map[string]string{spool.ManifestFile: "", "e00001.ndjson": ""}, 5*time.Minute, false),
		Entry("a data file written: a publish, or its leftover", map[string]string{spool.ManifestFile: "", "e00001.ndjson": "{}\n"}, 11*time.Minute, false),
		Entry("a manifest written", map[string]string{spool.ManifestFile: "{}", "e00001.ndjson": ""}, 11*time.Minute, false),
		Entry("another file beside them", map[string]string{spool.ManifestFile: "", "e00001.ndjson": "", "e00002.ndjson": ""}, 11*time.Minute, false),
		Entry("the manifest alone", map[string]string{spool.ManifestFile: ""}, 11*time.Minute, false),
	)

	It("takes configured ages", func() {
		mk(spool.StateTmp, "a", 2*time.Minute)
		mk(spool.StateFailed, "b", 2*time.Hour)
		p := d.Path(spool.StateTmp, "prepared")
		Expect(os.MkdirAll(p, 0o700)).To(Succeed())
		for _, name := range []string{spool.ManifestFile, "e00001.ndjson"} {
			Expect(os.WriteFile(filepath.Join(p, name), nil, 0o600)).To(Succeed())
		}
		t := now.Add(-40 * time.Second)
		Expect(os.Chtimes(p, t, t)).To(Succeed())
		res, err := d.GC(ctx, spool.GCOptions{TmpAge: time.Minute, FailedAge: time.Hour, PreparedAge: 30 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Tmp).To(ConsistOf("prepared", "a"))
		Expect(res.Failed).To(Equal([]string{"b"}))
	})
})
