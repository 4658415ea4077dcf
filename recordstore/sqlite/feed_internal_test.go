// The row feed's bound: its background normalizer runs at most feedWindow
// rows ahead of the rows the insert loop has let go of.

package sqlite

import (
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("a row feed", func() {
	It("normalizes at most feedWindow rows past the last row released, and every row once", func() {
		const n = 40 * feedWindow
		var converted, released, ahead atomic.Int64
		conv := func(i int) (recordstore.Values, error) {
			converted.Add(1)
			if d := int64(i+1) - released.Load(); d > ahead.Load() {
				ahead.Store(d) // only the producer writes it
			}
			return recordstore.Values{int64(i)}, nil
		}
		f, err := (&table{}).feed(n, conv)
		Expect(err).NotTo(HaveOccurred())
		for i := 0; i < n; i++ {
			Expect(f.wait(i + 1)).To(Succeed())
			Expect(f.row(i)).To(Equal(recordstore.Values{int64(i)}))
			if i == 0 {
				// Give the producer every chance to run ahead: it has
				// converted a whole window before the first release.
				Eventually(converted.Load).WithTimeout(time.Minute).Should(BeNumerically(">=", feedWindow))
			}
			released.Store(int64(i + 1))
			f.release(i, i+1)
		}
		Expect(f.settle(nil)).To(Succeed())
		Expect(converted.Load()).To(Equal(int64(n)))
		Expect(ahead.Load()).To(BeNumerically("<=", feedWindow))
		for k, s := range f.slabs {
			Expect(s).To(BeNil(), "slab %d is let go once its rows are released", k)
		}
	})

	It("gives every row to a consumer that keeps them all, past the window", func() {
		const n = 3*feedWindow + 5
		f, err := (&table{}).feed(n, func(i int) (recordstore.Values, error) { return recordstore.Values{int64(i)}, nil })
		Expect(err).NotTo(HaveOccurred())
		Expect(f.wait(n)).To(Succeed())
		all := f.all()
		Expect(all).To(HaveLen(n))
		Expect(all[n-1]).To(Equal(recordstore.Values{int64(n - 1)}))
	})
})
