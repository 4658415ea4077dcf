package owner

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the store lock", func() {
	It("is not taken on a lock file its holder removed: the file at the path is locked instead", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.lock")
		// A descriptor that locks the file after its holder removed it, as
		// one opened before the removal and locked after the holder let go.
		stale := newFlockFile(path, 0o600)
		Expect(stale.TryLock()).To(BeTrue())
		Expect(os.Remove(path)).To(Succeed())
		Expect(stale.TryLock()).To(BeTrue(), "still held")

		l := &lockFile{f: stale}
		Expect(l.try()).To(BeTrue())
		Expect(path).To(BeAnExistingFile(), "the lock file at the path was made again")
		Expect(l.namesLocked()).To(BeTrue(), "the file locked is the one at the path")

		other, err := newLockFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(other.try()).To(BeFalse(), "a second taker meets the lock")
		Expect(l.unlock()).To(Succeed())
		Expect(other.try()).To(BeTrue())
		Expect(other.unlock()).To(Succeed())
	})

	It("lets a holder remove its lock file, and a waiter then locks a new one", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.lock")
		l, err := newLockFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.try()).To(BeTrue())
		Expect(l.removeHeld()).To(Succeed())
		Expect(path).NotTo(BeAnExistingFile())
		Expect(l.namesLocked()).To(BeFalse())
		other, err := newLockFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(other.try()).To(BeTrue(), "the removed file's lock holds nobody out of the new one")
		Expect(l.unlock()).To(Succeed())
		Expect(other.unlock()).To(Succeed())
	})
})
