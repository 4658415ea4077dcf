// Validation cases a repository cannot hold (a FIFO) or that are made
// from an intact batch at run time: each replaces one of its paths.

//go:build unix

package spool_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("validating foreign batches with odd files", func() {
	DescribeTable("refuses a batch whose folder, manifest or data file is not a plain one, without waiting on it",
		func(replace func(batch string), want error, reason string) {
			d := openCase("ok-ndjson")
			list, err := d.List(context.Background(), spool.StateIncoming)
			Expect(err).NotTo(HaveOccurred())
			Expect(list).To(HaveLen(1))
			replace(d.Path(spool.StateIncoming, list[0].String()))
			before := snapshot(d.Root())
			_, err = ingestLike(d)
			Expect(err).To(MatchError(want))
			Expect(err).To(MatchError(ContainSubstring(reason)))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(snapshot(d.Root())).To(Equal(before))
		},
		Entry("a batch that is a file", func(batch string) {
			Expect(os.RemoveAll(batch)).To(Succeed())
			Expect(os.WriteFile(batch, []byte("{}"), 0o600)).To(Succeed())
		}, spool.ErrUnsafePath, "not a folder"),
		Entry("a batch that is a symlink to a folder", func(batch string) {
			Expect(os.Rename(batch, batch+".real")).To(Succeed())
			Expect(os.Symlink(filepath.Base(batch)+".real", batch)).To(Succeed())
		}, spool.ErrUnsafePath, "is a symlink, refused"),
		Entry("a manifest that is a FIFO", func(batch string) {
			m := filepath.Join(batch, spool.ManifestFile)
			Expect(os.Remove(m)).To(Succeed())
			Expect(syscall.Mkfifo(m, 0o600)).To(Succeed())
		}, spool.ErrUnsafePath, "not a plain file"),
		Entry("a manifest that is a symlink", func(batch string) {
			m := filepath.Join(batch, spool.ManifestFile)
			Expect(os.Rename(m, m+".real")).To(Succeed())
			Expect(os.Symlink(spool.ManifestFile+".real", m)).To(Succeed())
		}, spool.ErrUnsafePath, "is a symlink"),
		Entry("a data file that is a FIFO", func(batch string) {
			f := filepath.Join(batch, "e00001.ndjson")
			Expect(os.Remove(f)).To(Succeed())
			Expect(syscall.Mkfifo(f, 0o600)).To(Succeed())
		}, spool.ErrUnsafePath, "not a plain file"),
		Entry("a data file that is a folder", func(batch string) {
			f := filepath.Join(batch, "e00001.ndjson")
			Expect(os.Remove(f)).To(Succeed())
			Expect(os.Mkdir(f, 0o700)).To(Succeed())
		}, spool.ErrUnsafePath, "not a plain file"),
	)
})
