package owner

import (
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the notice filter", func() {
	var (
		f     *noticeFilter
		polls atomic.Int64
	)
	BeforeEach(func() {
		f = &noticeFilter{}
		polls.Store(0)
		f.reset(7, func() { polls.Add(1) })
	})

	It("probes for every notice of a commit that is not this process's own", func() {
		f.notice(1)
		f.notice(2)
		Expect(polls.Load()).To(Equal(int64(2)))
		f.notice(2) // nothing new
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	It("skips the notice of an own commit answered before it arrives, and not one that also announces another", func() {
		f.notice(3)
		Expect(polls.Load()).To(Equal(int64(1)))
		f.begin()
		f.end(7, 4)
		f.notice(4)
		Expect(polls.Load()).To(Equal(int64(1)), "commit 4 is this process's own")
		f.begin()
		f.end(7, 6)
		f.notice(6) // 5 is someone else's
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	It("holds a notice that arrives while an own append waits, and skips it when the answer says it was that commit", func() {
		f.notice(1)
		f.begin()
		f.notice(2)
		Expect(polls.Load()).To(Equal(int64(1)), "held")
		f.end(7, 2)
		Consistently(polls.Load, 3*noticeHold).Should(Equal(int64(1)))
	})

	It("probes for a held notice once the answer shows another commit in it, or no answer comes in time", func() {
		f.begin()
		f.notice(1)
		f.end(7, 2) // its own commit is 2: 1 is another's
		Expect(polls.Load()).To(Equal(int64(1)))

		f.begin()
		f.notice(3)
		Expect(polls.Load()).To(Equal(int64(1)))
		Eventually(polls.Load).WithTimeout(time.Second).Should(Equal(int64(2)), "released after noticeHold")
		f.end(0, 0) // the answer, late and without a commit
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	It("does not hold notices longer than noticeHold while appends keep coming", func() {
		f.begin()
		f.notice(1)
		start := time.Now()
		for time.Since(start) < 4*noticeHold {
			f.begin()
			f.end(0, 0)
			f.notice(2) // more notices must not push the release back
			time.Sleep(noticeHold / 5)
		}
		Expect(polls.Load()).To(BeNumerically(">=", 1))
		f.end(0, 0)
	})

	It("takes no own commit of another owner's tenure, nor any before a subscription", func() {
		f.begin()
		f.end(6, 1) // an answer of the previous owner
		f.notice(1)
		Expect(polls.Load()).To(Equal(int64(1)))

		g := &noticeFilter{}
		g.begin()
		g.end(7, 1) // not subscribed: epoch unknown
		g.reset(7, func() { polls.Add(1) })
		g.notice(1)
		Expect(polls.Load()).To(Equal(int64(2)))
	})
})
