// Specs of Buffer: the cap, take, requeue at the front with tail
// evictions, retries, the counters, Reached, and concurrent use.

package recorder_test

import (
	"strconv"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// ev is an event named by its number, so order is visible.
func ev(i int) recorder.Event { return recorder.Annotation(at, strconv.Itoa(i), nil) }

// ids returns the numbers of events made by ev.
func ids(es []recorder.Event) []int {
	out := make([]int, len(es))
	for i, e := range es {
		out[i], _ = strconv.Atoi(*e.TaskID)
	}
	return out
}

func pushRange(b *recorder.Buffer, from, to int) {
	for i := from; i <= to; i++ {
		b.Push(ev(i))
	}
}

var _ = Describe("Buffer", func() {
	It("hands events out oldest first, at most max at a time", func() {
		b := recorder.NewBuffer(10, 3)
		pushRange(b, 1, 5)
		Expect(ids(b.Take(3))).To(Equal([]int{1, 2, 3}))
		Expect(ids(b.Take(0))).To(Equal([]int{4, 5}))
		Expect(b.Take(10)).To(BeNil())
		Expect(b.Stats()).To(Equal(recorder.BufferStats{}))
	})

	It("drops the oldest event when full, and counts it", func() {
		b := recorder.NewBuffer(3, 3)
		pushRange(b, 1, 5)
		Expect(b.Stats()).To(Equal(recorder.BufferStats{Size: 3, DroppedOldest: 2}))
		Expect(ids(b.Take(0))).To(Equal([]int{3, 4, 5}))
	})

	It("puts a failed batch back at the front, before newer events", func() {
		b := recorder.NewBuffer(10, 3)
		pushRange(b, 1, 4)
		batch := b.Take(2)
		pushRange(b, 5, 6)
		b.Requeue(batch)
		Expect(ids(b.Take(0))).To(Equal([]int{1, 2, 3, 4, 5, 6}))
		Expect(b.Stats()).To(Equal(recorder.BufferStats{Retries: 1}))
	})

	It("evicts the newest events from the tail to make room for a requeued batch, and counts them", func() {
		b := recorder.NewBuffer(5, 3)
		pushRange(b, 1, 5)
		batch := b.Take(3)
		pushRange(b, 6, 8)
		b.Requeue(batch)
		Expect(b.Stats()).To(Equal(recorder.BufferStats{Size: 5, TailEvicted: 3, Retries: 1}))
		Expect(ids(b.Take(0))).To(Equal([]int{1, 2, 3, 4, 5}))
	})

	It("keeps the first events of a requeued batch larger than the cap", func() {
		b := recorder.NewBuffer(2, 3)
		b.Requeue([]recorder.Event{ev(1), ev(2), ev(3)})
		Expect(ids(b.Take(0))).To(Equal([]int{1, 2}))
		Expect(b.Stats().TailEvicted).To(Equal(int64(1)))
	})

	It("drops a batch after max_flush_retries consecutive failures, and counts its events", func() {
		b := recorder.NewBuffer(10, 3)
		pushRange(b, 1, 2)
		for failure := 1; failure <= 2; failure++ {
			b.Requeue(b.Take(0))
			Expect(b.Len()).To(Equal(2), "after failure %d", failure)
		}
		pushRange(b, 3, 3)
		b.Requeue(b.Take(2))
		Expect(b.Stats()).To(Equal(recorder.BufferStats{Size: 1, DroppedAfterRetries: 2, Retries: 2}))
		Expect(ids(b.Take(0))).To(Equal([]int{3}))
	})

	It("counts failures per event, so a newer event in a retried batch gets its own retries", func() {
		b := recorder.NewBuffer(10, 2)
		pushRange(b, 1, 1)
		b.Requeue(b.Take(0)) // 1 failed once
		pushRange(b, 2, 2)
		b.Requeue(b.Take(0)) // 1 failed twice: dropped; 2 failed once
		Expect(ids(b.Take(0))).To(Equal([]int{2}))
		Expect(b.Stats().DroppedAfterRetries).To(Equal(int64(1)))
	})

	It("drops a batch at its first failure with max_flush_retries 0", func() {
		b := recorder.NewBuffer(10, 0)
		pushRange(b, 1, 2)
		b.Requeue(b.Take(0))
		Expect(b.Stats()).To(Equal(recorder.BufferStats{DroppedAfterRetries: 2}))
	})

	It("takes its cap and retries from the config", func() {
		c := valid()
		Expect(c.Set("ui.recorder.max_buffer", "1000")).To(Succeed())
		b := recorder.NewBufferFromConfig(c)
		pushRange(b, 1, 1001)
		Expect(b.Stats().DroppedOldest).To(Equal(int64(1)))
	})

	Describe("Reached", func() {
		It("is closed once the buffer holds n events", func() {
			b := recorder.NewBuffer(10, 3)
			ch := b.Reached(3)
			pushRange(b, 1, 2)
			Expect(ch).NotTo(BeClosed())
			b.Push(ev(3))
			Expect(ch).To(BeClosed())
		})

		It("is closed at once when the buffer already holds n events", func() {
			b := recorder.NewBuffer(10, 3)
			pushRange(b, 1, 3)
			Expect(b.Reached(2)).To(BeClosed())
		})

		It("is closed by a requeue that fills the buffer", func() {
			b := recorder.NewBuffer(10, 3)
			pushRange(b, 1, 2)
			batch := b.Take(0)
			ch := b.Reached(2)
			b.Requeue(batch)
			Expect(ch).To(BeClosed())
		})
	})

	It("loses no event and counts every drop while many goroutines push and one takes", func() {
		const pushers, each, capacity = 8, 2000, 1000
		b := recorder.NewBuffer(capacity, 3)
		var wg sync.WaitGroup
		var finished atomic.Int32
		for p := 0; p < pushers; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer finished.Add(1)
				for i := 0; i < each; i++ {
					b.Push(ev(i))
				}
			}()
		}
		done := make(chan struct{})
		taken := 0
		go func() {
			defer close(done)
			for round := 0; ; round++ {
				allPushed := finished.Load() == pushers
				batch := b.Take(100)
				if round%7 == 3 && batch != nil {
					b.Requeue(batch)
					continue
				}
				taken += len(batch)
				if batch == nil && allPushed {
					return
				}
			}
		}()
		wg.Wait()
		<-done
		s := b.Stats()
		Expect(s.Size).To(Equal(0))
		Expect(int64(taken) + s.DroppedOldest + s.TailEvicted + s.DroppedAfterRetries).To(Equal(int64(pushers * each)))
	})
})
