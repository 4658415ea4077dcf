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
		f.end(7, 4, nil)
		f.notice(4)
		Expect(polls.Load()).To(Equal(int64(1)), "commit 4 is this process's own")
		f.begin()
		f.end(7, 6, nil)
		f.notice(6) // 5 is someone else's
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	It("holds a notice that arrives while an own append waits, and skips it when the answer says it was that commit", func() {
		f.notice(1)
		f.begin()
		f.notice(2)
		Expect(polls.Load()).To(Equal(int64(1)), "held")
		f.end(7, 2, nil)
		Consistently(polls.Load, 3*noticeHold).Should(Equal(int64(1)))
	})

	It("probes for a held notice once the answer shows another commit in it, or no answer comes in time", func() {
		f.begin()
		f.notice(1)
		f.end(7, 2, nil) // its own commit is 2: 1 is another's
		Expect(polls.Load()).To(Equal(int64(1)))

		f.begin()
		f.notice(3)
		Expect(polls.Load()).To(Equal(int64(1)))
		Eventually(polls.Load).WithTimeout(time.Second).Should(Equal(int64(2)), "released after noticeHold")
		f.end(0, 0, nil) // the answer, late and without a commit
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	It("does not hold notices longer than noticeHold while appends keep coming", func() {
		f.begin()
		f.notice(1)
		start := time.Now()
		for time.Since(start) < 4*noticeHold {
			f.begin()
			f.end(0, 0, nil)
			f.notice(2) // more notices must not push the release back
			time.Sleep(noticeHold / 5)
		}
		Expect(polls.Load()).To(BeNumerically(">=", 1))
		f.end(0, 0, nil)
	})

	It("takes no own commit of another owner's tenure, nor any before a subscription", func() {
		f.begin()
		f.end(6, 1, nil) // an answer of the previous owner
		f.notice(1)
		Expect(polls.Load()).To(Equal(int64(1)))

		g := &noticeFilter{}
		g.begin()
		g.end(7, 1, nil) // not subscribed: epoch unknown
		g.reset(7, func() { polls.Add(1) })
		g.notice(1)
		Expect(polls.Load()).To(Equal(int64(2)))
	})

	Describe("the streams known to take a kind", func() {
		took := []streamKind{{"s1", "k"}, {"s2", "k"}}

		It("knows the streams of an own commit's appends, for their kind only", func() {
			Expect(f.knowsTakes("s1", "k")).To(BeFalse(), "nothing appended yet")
			f.begin()
			f.end(7, 1, took)
			f.notice(1)
			Expect(f.knowsTakes("s1", "k")).To(BeTrue())
			Expect(f.knowsTakes("s2", "k")).To(BeTrue())
			Expect(f.knowsTakes("s1", "other")).To(BeFalse(), "another kind is checked in the file")
			Expect(f.knowsTakes("s3", "k")).To(BeFalse())
			f.begin()
			f.end(7, 2, took[:1])
			f.notice(2)
			Expect(f.knowsTakes("s2", "k")).To(BeTrue(), "commit 2 was this process's own too")
		})

		It("forgets them at the notice of another writer's commit, even one announced with an own commit", func() {
			f.begin()
			f.end(7, 1, took)
			f.notice(3) // 2 is someone else's
			Expect(f.knowsTakes("s1", "k")).To(BeFalse())
			f.begin()
			f.end(7, 4, took[:1])
			Expect(f.knowsTakes("s1", "k")).To(BeTrue(), "an own commit after it")
			Expect(f.knowsTakes("s2", "k")).To(BeFalse())
		})

		It("learns nothing from an own commit older than another writer's", func() {
			f.notice(5) // another writer's commits up to 5
			f.begin()
			f.end(7, 4, took) // answered late
			Expect(f.knowsTakes("s1", "k")).To(BeFalse())
		})

		It("trusts no stream while a notice past it waits for an answer", func() {
			f.begin()
			f.end(7, 1, took)
			f.begin()
			f.notice(2) // held for the answer
			Expect(f.knowsTakes("s1", "k")).To(BeFalse())
			f.end(7, 2, nil)
			Expect(f.knowsTakes("s1", "k")).To(BeTrue(), "2 was this process's own")
		})

		It("forgets them after an answer without an own commit, on forgetTakes, and with the subscription", func() {
			f.begin()
			f.end(7, 1, took)
			f.begin()
			f.end(0, 0, nil) // e.g. a seal, or no answer
			Expect(f.knowsTakes("s1", "k")).To(BeFalse())

			f.begin()
			f.end(7, 2, took)
			f.forgetTakes()
			Expect(f.knowsTakes("s1", "k")).To(BeFalse())

			f.begin()
			f.end(7, 3, took)
			Expect(f.knowsTakes("s1", "k")).To(BeTrue())
			f.reset(0, nil)
			Expect(f.knowsTakes("s1", "k")).To(BeFalse(), "no subscription")
			f.reset(8, func() { polls.Add(1) })
			Expect(f.knowsTakes("s1", "k")).To(BeFalse(), "a new owner")
		})

		It("knows nothing without a subscription", func() {
			g := &noticeFilter{}
			g.begin()
			g.end(0, 1, took)
			Expect(g.knowsTakes("s1", "k")).To(BeFalse())
		})
	})
})
