// A randomized model test of Buffer: random pushes, takes and requeues
// against a plain-slice model of the documented rules, compared after
// every step.

package recorder_test

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// bufferModel is the documented behaviour of Buffer on plain slices.
type bufferModel struct {
	max, retries int
	ids          []int
	tries        map[int]int
	stats        recorder.BufferStats
}

func (m *bufferModel) push(id int) {
	if len(m.ids) == m.max {
		m.ids = m.ids[1:]
		m.stats.DroppedOldest++
	}
	m.ids = append(m.ids, id)
}

func (m *bufferModel) take(n int) []int {
	if n <= 0 || n > len(m.ids) {
		n = len(m.ids)
	}
	out := append([]int(nil), m.ids[:n]...)
	m.ids = m.ids[n:]
	return out
}

func (m *bufferModel) requeue(batch []int) {
	var keep []int
	for _, id := range batch {
		m.tries[id]++
		if m.tries[id] >= m.retries {
			m.stats.DroppedAfterRetries++
			continue
		}
		keep = append(keep, id)
	}
	if len(keep) == 0 {
		return
	}
	m.stats.Retries++
	all := append(keep, m.ids...)
	if len(all) > m.max {
		m.stats.TailEvicted += int64(len(all) - m.max)
		all = all[:m.max]
	}
	m.ids = all
}

var _ = Describe("Buffer against its model", func() {
	It("agrees with the model over random pushes, takes and requeues", func() {
		r := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 1))
		for run := 0; run < 50; run++ {
			max, retries := 1+r.IntN(8), r.IntN(4)
			b := recorder.NewBuffer(max, retries)
			m := &bufferModel{max: max, retries: retries, tries: map[int]int{}}
			var pending [][]recorder.Event
			next := 0
			for step := 0; step < 200; step++ {
				switch op := r.IntN(10); {
				case op < 5:
					b.Push(ev(next))
					m.push(next)
					next++
				case op < 8:
					n := r.IntN(max + 2)
					got := b.Take(n)
					Expect(ids(got)).To(Equal(orEmpty(m.take(n))), "run %d step %d: take %d", run, step, n)
					if got != nil {
						pending = append(pending, got)
					}
				case len(pending) > 0:
					batch := pending[len(pending)-1]
					pending = pending[:len(pending)-1]
					b.Requeue(batch)
					m.requeue(ids(batch))
				}
				s := m.stats
				s.Size = len(m.ids)
				Expect(b.Stats()).To(Equal(s), "run %d step %d", run, step)
			}
		}
	})
})

func orEmpty(s []int) []int {
	if len(s) == 0 {
		return []int{}
	}
	return s
}
