//go:build unix

package owner

import (
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the store lock's descriptor", func() {
	It("is moved above lockFDFloor once won, still locked, and closed when let go", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.lock")
		l, err := newLockFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.try()).To(BeTrue())
		fd := int(l.f.fh.Fd())
		Expect(fd).To(BeNumerically(">=", lockFDFloor), "released first when the process dies")
		other, err := newLockFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(other.try()).To(BeFalse(), "the moved descriptor holds the lock")
		Expect(l.unlock()).To(Succeed())
		_, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if _, perr := os.Stat("/proc/self/fd"); perr == nil {
			Expect(err).To(HaveOccurred(), "the descriptor is closed")
		}
		Expect(other.try()).To(BeTrue())
		Expect(other.unlock()).To(Succeed())
	})
})
