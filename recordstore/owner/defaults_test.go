// The documented defaults of Options.

package owner

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("Options defaults", func() {
	It("are the ones the documentation gives", func() {
		o := Options[Target]{}.withDefaults()
		Expect(o.StartWait).To(Equal(60 * time.Second))
		Expect(o.DrainOnClose).To(Equal(10 * time.Second))
		Expect(o.PollMin).To(Equal(50 * time.Millisecond))
		Expect(o.PollMax).To(Equal(500 * time.Millisecond))
		Expect(o.Heartbeat).To(Equal(5 * time.Second))
		Expect(o.GapWait).To(Equal(60 * time.Second))
		Expect(o.Retry).To(Equal(RetryPolicy{Min: 100 * time.Millisecond, Max: 30 * time.Second, Attempts: 20, For: 10 * time.Minute}))
		Expect(o.GCInterval).To(Equal(time.Minute))
		Expect(o.LedgerRetention).To(Equal(7 * 24 * time.Hour))
		Expect(o.Format).To(Equal(spool.FormatNDJSON))
		Expect(o.Logger).NotTo(BeNil())
	})

	It("keep what the caller set", func() {
		o := Options[Target]{PollMin: time.Millisecond, Retry: RetryPolicy{Attempts: 3}, Format: "parquet"}.withDefaults()
		Expect(o.PollMin).To(Equal(time.Millisecond))
		Expect(o.Retry.Attempts).To(Equal(3))
		Expect(o.Retry.Min).To(Equal(100*time.Millisecond), "the fields left at zero still get theirs")
		Expect(o.Format).To(Equal("parquet"))
	})
})

var _ = Describe("the ingest loop's polling", func() {
	It("backs off by doubling from PollMin to PollMax", func() {
		Expect(nextPoll(50*time.Millisecond, 500*time.Millisecond)).To(Equal(100 * time.Millisecond))
		Expect(nextPoll(400*time.Millisecond, 500*time.Millisecond)).To(Equal(500 * time.Millisecond))
		Expect(nextPoll(500*time.Millisecond, 500*time.Millisecond)).To(Equal(500 * time.Millisecond))
	})
})
