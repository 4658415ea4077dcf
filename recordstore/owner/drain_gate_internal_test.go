package owner

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the drain gate", func() {
	It("is unlocked by the time a waiter on end wakes", func() {
		// The waiter spins on the channel, so that it sees the close within
		// nanoseconds; many rounds give an unlock that wakes first many
		// chances to show.
		g := &drainGate{}
		for range 20000 {
			g.lock()
			ended := g.end()
			go g.unlock()
			for i := 0; !closed(ended); i++ {
				if i == 10000 { // one processor: let the unlock run
					<-ended
				}
			}
			Expect(g.tryLock()).To(BeTrue(), "a waiter woken by the end of a drain could not start the next")
			g.unlock()
		}
	})

	It("hands a caller of end during a drain the channel of that drain, not of the one before", func() {
		g := &drainGate{}
		g.lock()
		first := g.end()
		g.unlock()
		Expect(first).To(BeClosed())
		g.lock()
		second := g.end()
		Expect(second).NotTo(BeClosed())
		g.unlock()
		Expect(second).To(BeClosed())
	})
})

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
