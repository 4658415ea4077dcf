package recordstore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Notifier", func() {
	It("wakes the waiters of the notified stream only", func() {
		n := recordstore.NewNotifier()
		a, b := n.Changed("a"), n.Changed("b")
		n.Notify("a")
		Expect(a).To(BeClosed())
		Expect(b).NotTo(BeClosed())
		Expect(n.Changed("a")).NotTo(BeClosed(), "a new wait starts after the notification")
	})

	It("hands every waiter of one stream the same channel until it fires", func() {
		n := recordstore.NewNotifier()
		Expect(n.Changed("a")).To(Equal(n.Changed("a")))
	})

	It("wakes everyone on NotifyAll", func() {
		n := recordstore.NewNotifier()
		a, b := n.Changed("a"), n.Changed("b")
		n.NotifyAll()
		Expect(a).To(BeClosed())
		Expect(b).To(BeClosed())
	})

	It("calls its observers after every Notify and NotifyAll until they cancel", func() {
		n := recordstore.NewNotifier()
		var calls int
		cancel := n.Observe(func() { calls++ })
		n.Notify("a")
		n.Notify() // a commit that touched no followed stream still counts
		n.NotifyAll()
		Expect(calls).To(Equal(3))
		cancel()
		n.Notify("a")
		Expect(calls).To(Equal(3))
	})
})
