// OpenRoot: the spool's folders, made durably with as few fsyncs as that
// needs.

package spool_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("OpenRoot's folders", func() {
	var (
		log  *fsyncLog
		opts spool.Options
		root string
	)
	BeforeEach(func() {
		log = &fsyncLog{}
		opts = spool.WithFS(spool.Options{}, &fsutil.Helper{FS: log})
		root = filepath.Join(GinkgoT().TempDir(), "s.spool")
	})

	It("makes the root and its four folders 0700 with one fsync of the parent and one of the root", func(ctx context.Context) {
		_, err := spool.OpenRoot(ctx, root, opts)
		Expect(err).NotTo(HaveOccurred())
		for _, s := range []spool.State{spool.StateTmp, spool.StateIncoming, spool.StateFailed, spool.StateTrash} {
			fi, err := os.Stat(filepath.Join(root, string(s)))
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.IsDir()).To(BeTrue())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		}
		Expect(log.take()).To(Equal([]string{filepath.Dir(root) + "/", root + "/"}))
	})

	It("fsyncs nothing when every folder exists", func(ctx context.Context) {
		_, err := spool.OpenRoot(ctx, root, opts)
		Expect(err).NotTo(HaveOccurred())
		log.take()
		_, err = spool.OpenRoot(ctx, root, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(log.take()).To(BeEmpty())
	})

	It("makes a missing folder again and fsyncs the root once", func(ctx context.Context) {
		_, err := spool.OpenRoot(ctx, root, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Remove(filepath.Join(root, string(spool.StateFailed)))).To(Succeed())
		log.take()
		_, err = spool.OpenRoot(ctx, root, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(filepath.Join(root, string(spool.StateFailed))).To(BeADirectory())
		Expect(log.take()).To(Equal([]string{root + "/"}))
	})

	It("refuses a sub-folder that is a file, naming it", func(ctx context.Context) {
		Expect(os.MkdirAll(root, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(root, string(spool.StateIncoming)), nil, 0o600)).To(Succeed())
		_, err := spool.OpenRoot(ctx, root, opts)
		Expect(err).To(MatchError(ContainSubstring("incoming: not a directory")))
	})
})
