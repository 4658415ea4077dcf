// Specs: following streams with recordstore.Wait and recordstore.Tail, woken
// by the backend's Notifier.

package recordstoretest

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// wakeTimeout bounds how long a follower may take to notice a change. It is
// a liveness bound, not a speed goal: a follower that was never notified
// stays asleep for FollowRecheck (set to an hour in these specs).
const wakeTimeout = 10 * time.Second

// waitResult is what one recordstore.Wait call returned.
type waitResult struct {
	meta recordstore.Meta
	err  error
}

func (s *suite) describeFollow() {
	Describe("follow", func() {
		BeforeEach(func() {
			s.declare(eventKind())
			old := recordstore.FollowRecheck
			recordstore.FollowRecheck = time.Hour // only a notification can wake a follower
			DeferCleanup(func() { recordstore.FollowRecheck = old })
		})

		// goWait runs Wait in the background; the spec's cleanup cancels it
		// and waits for it to end.
		goWait := func(stream string, after int64) (<-chan waitResult, context.CancelFunc) {
			ctx, cancel := context.WithCancel(s.ctx)
			ch := make(chan waitResult, 1)
			done := make(chan struct{})
			go func() {
				defer GinkgoRecover()
				defer close(done)
				m, err := recordstore.Wait(ctx, s.b, stream, after)
				ch <- waitResult{m, err}
			}()
			DeferCleanup(func() { cancel(); <-done })
			return ch, cancel
		}
		expectAsleep := func(ch <-chan waitResult) {
			Consistently(ch, 50*time.Millisecond, 10*time.Millisecond).ShouldNot(Receive())
		}
		receive := func(ch <-chan waitResult) waitResult {
			var r waitResult
			EventuallyWithOffset(1, ch, wakeTimeout).Should(Receive(&r))
			ExpectWithOffset(1, r.err).NotTo(HaveOccurred())
			return r
		}

		It("returns at once when the stream already has a row after the given seq", func() {
			s.append("f", "event", events(1, 2)...)
			ctx, cancel := context.WithTimeout(s.ctx, wakeTimeout)
			defer cancel()
			m, err := recordstore.Wait(ctx, s.b, "f", 1)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.HighSeq).To(Equal(int64(2)))
		})

		It("is woken by an append", func() {
			s.append("f", "event", events(1, 1)...)
			ch, _ := goWait("f", 1)
			expectAsleep(ch)
			s.append("f", "event", events(2, 2)...)
			Expect(receive(ch).meta.HighSeq).To(Equal(int64(3)))
		})

		It("waits for a stream that does not exist yet", func() {
			ch, _ := goWait("later", 0)
			expectAsleep(ch)
			s.append("later", "event", events(1, 1)...)
			Expect(receive(ch).meta.HighSeq).To(Equal(int64(1)))
		})

		It("is woken by a seal", func() {
			s.append("f", "event", events(1, 1)...)
			ch, _ := goWait("f", 1)
			expectAsleep(ch)
			_, err := s.b.Seal(s.ctx, "f")
			Expect(err).NotTo(HaveOccurred())
			m := receive(ch).meta
			Expect(m.Sealed).To(BeTrue())
			Expect(m.HighSeq).To(Equal(int64(1)))
		})

		It("returns once the generation it saw is replaced, even below its seq", func() {
			s.skipBound("a bound table never reuses an id, so a new generation never starts below the old seqs")
			s.append("f", "event", events(1, 2)...)
			ch, _ := goWait("f", 2)
			expectAsleep(ch)
			Expect(s.b.Delete(s.ctx, "f")).To(Succeed())
			s.append("f", "event", events(1, 1)...) // generation 2, seq 1: not above 2
			m := receive(ch).meta
			Expect(m.Generation).To(Equal(int64(2)))
			Expect(m.HighSeq).To(Equal(int64(1)))
		})

		It("is woken by the first append of a new generation", func() {
			s.append("f", "event", events(1, 3)...)
			Expect(s.b.Delete(s.ctx, "f")).To(Succeed())
			ch, _ := goWait("f", 0)
			expectAsleep(ch)
			s.append("f", "event", events(1, 1)...)
			Expect(receive(ch).meta.Generation).To(Equal(int64(2)))
		})

		It("returns the context's error when the context ends first", func() {
			ch, cancel := goWait("never", 0)
			expectAsleep(ch)
			cancel()
			var r waitResult
			Eventually(ch, wakeTimeout).Should(Receive(&r))
			Expect(r.err).To(MatchError(context.Canceled))
		})

		It("tails every row in order across appends and pages, and ends on seal", func() {
			tailed, done := goTail(s, "t")
			Consistently(done, 50*time.Millisecond, 10*time.Millisecond).ShouldNot(Receive())
			s.append("t", "event", events(1, 3)...)
			s.append("t", "event", events(4, recordstore.TailPage+5)...)
			s.append("t", "event", events(recordstore.TailPage+9, 1)...)
			total := int64(recordstore.TailPage + 9)
			Eventually(func() int { return len(tailed()) }, wakeTimeout).Should(BeEquivalentTo(total))
			Consistently(done, 20*time.Millisecond, 10*time.Millisecond).ShouldNot(Receive(), "Tail ends only on seal")
			_, err := s.b.Seal(s.ctx, "t")
			Expect(err).NotTo(HaveOccurred())
			Eventually(done, wakeTimeout).Should(Receive(BeNil()))
			got := tailed()
			Expect(seqs(got)).To(Equal(seqRange(1, total)))
			for _, r := range got {
				Expect(r.Values["n"]).To(Equal(r.Seq))
			}
		})

		It("ends the tail of a generation once the stream is deleted, delivering no row of the next generation", func() {
			s.append("t", "event", events(1, 2)...)
			tailed, done := goTail(s, "t")
			Eventually(func() int { return len(tailed()) }, wakeTimeout).Should(Equal(2))
			Expect(s.b.Delete(s.ctx, "t")).To(Succeed())
			s.append("t", "event", events(101, 3)...) // the next generation: seqs 1 to 3 again
			Eventually(done, wakeTimeout).Should(Receive(BeNil()))
			got := tailed()
			Expect(seqs(got)).To(Equal([]int64{1, 2}))
			for _, r := range got {
				Expect(r.Values["n"]).To(BeNumerically("<", 100), "a row of the next generation was delivered")
			}
		})

		It("ends a tail started inside a generation that is replaced before it reaches its seq", func() {
			s.append("t", "event", events(1, 2)...)
			var got []int64
			done := make(chan error, 1)
			ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
			defer cancel()
			go func() {
				defer GinkgoRecover()
				done <- recordstore.Tail(ctx, s.b, "t", 5, func(r recordstore.Record) error {
					got = append(got, r.Seq)
					return nil
				})
			}()
			Consistently(done, 50*time.Millisecond, 10*time.Millisecond).ShouldNot(Receive())
			Expect(s.b.Delete(s.ctx, "t")).To(Succeed())
			s.append("t", "event", events(101, 7)...) // seqs 1 to 7 of the next generation
			Eventually(done, wakeTimeout).Should(Receive(BeNil()))
			Expect(got).To(BeEmpty(), "seqs 6 and 7 of the next generation are not the ones after 5 it was asked for")
		})

		It("tails from after the given seq and returns at once on a sealed, fully read stream", func() {
			s.append("t", "event", events(1, 5)...)
			_, err := s.b.Seal(s.ctx, "t")
			Expect(err).NotTo(HaveOccurred())
			var got []int64
			ctx, cancel := context.WithTimeout(s.ctx, wakeTimeout)
			defer cancel()
			Expect(recordstore.Tail(ctx, s.b, "t", 3, func(r recordstore.Record) error {
				got = append(got, r.Seq)
				return nil
			})).To(Succeed())
			Expect(got).To(Equal([]int64{4, 5}))
		})

		It("refuses a negative seq to tail after, naming it", func() {
			err := recordstore.Tail(s.ctx, s.b, "t", -1, func(recordstore.Record) error { return nil })
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("after -1")))
			Expect(err.Error()).NotTo(ContainSubstring("limit"))
		})

		It("stops tailing with the callback's error", func() {
			s.append("t", "event", events(1, 3)...)
			stop := errors.New("stop here")
			calls := 0
			ctx, cancel := context.WithTimeout(s.ctx, wakeTimeout)
			defer cancel()
			err := recordstore.Tail(ctx, s.b, "t", 0, func(recordstore.Record) error {
				calls++
				return stop
			})
			Expect(err).To(MatchError(stop))
			Expect(calls).To(Equal(1))
		})
	})
}

// goTail tails stream from the start on a goroutine (for at most a
// minute). tailed returns a copy of the records delivered so far; done
// receives Tail's result.
func goTail(s *suite, stream string) (tailed func() []recordstore.Record, done <-chan error) {
	var mu sync.Mutex
	var got []recordstore.Record
	ch := make(chan error, 1)
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	DeferCleanup(cancel)
	go func() {
		defer GinkgoRecover()
		ch <- recordstore.Tail(ctx, s.b, stream, 0, func(r recordstore.Record) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r)
			return nil
		})
	}()
	return func() []recordstore.Record {
		mu.Lock()
		defer mu.Unlock()
		return append([]recordstore.Record(nil), got...)
	}, ch
}
