package owner

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("waiters", func() {
	result := func(i int, outcome recordstore.BatchOutcome) recordstore.BatchResult {
		return recordstore.BatchResult{ID: fmt.Sprintf("%032x", i), Outcome: outcome}
	}

	It("answers a waiter registered before the outcome, once", func() {
		w := newWaiters()
		ch, cancel := w.add(result(1, "").ID)
		defer cancel()
		Expect(ch).To(BeEmpty())
		w.resolve(result(1, recordstore.OutcomeCommitted))
		Expect(ch).To(Receive(Equal(result(1, recordstore.OutcomeCommitted))))
		Expect(ch).NotTo(Receive())
	})

	It("answers at once a waiter that comes after one of the recent outcomes, the latest of its batch", func() {
		w := newWaiters()
		w.resolve(result(1, recordstore.OutcomeFailed))
		w.resolve(result(1, recordstore.OutcomeCommitted)) // retried, then applied
		ch, cancel := w.add(result(1, "").ID)
		defer cancel()
		Expect(ch).To(Receive(Equal(result(1, recordstore.OutcomeCommitted))))
	})

	It("keeps the latest recentResults outcomes only", func() {
		w := newWaiters()
		for i := range recentResults + 1 {
			w.resolve(result(i, recordstore.OutcomeCommitted))
		}
		oldest, cancel := w.add(result(0, "").ID)
		defer cancel()
		Expect(oldest).To(BeEmpty(), "the oldest was forgotten")
		for _, i := range []int{1, recentResults} {
			ch, cancel := w.add(result(i, "").ID)
			Expect(ch).To(Receive(Equal(result(i, recordstore.OutcomeCommitted))))
			cancel()
		}
		Expect(w.recent).To(HaveLen(recentResults))
		Expect(w.order).To(HaveLen(recentResults))
	})
})
