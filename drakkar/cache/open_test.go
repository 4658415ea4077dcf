// Specs for a cache whose store cannot be opened: the failure is the
// engine's typed one (records.Open), as every store's, and nothing of the
// engine is left beside it.

package cache_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("a cache whose file cannot be a store", func() {
	It("is refused with invalid, as any store whose live file is a directory, and leaves no engine file", func() {
		dir := GinkgoT().TempDir()
		cfg := config(dir, "w1", "c1")
		Expect(os.Mkdir(cache.FilePath(cfg), 0o700)).To(Succeed())

		c, err := cache.Open(ctx, cfg, cache.Options{NoLoops: true})
		if c != nil {
			DeferCleanup(func() { _ = c.Close(ctx) })
		}
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(recordstore.Code(err)).To(Equal("invalid"))
		Expect(err).To(MatchError(ContainSubstring(cache.FilePath(cfg) + " is a directory")))
		left, rerr := os.ReadDir(filepath.Join(dir, cache.EngineFolder))
		if !os.IsNotExist(rerr) {
			Expect(rerr).NotTo(HaveOccurred())
		}
		Expect(left).To(BeEmpty(), "no lock, state file or spool of the cache's store")
	})
})
