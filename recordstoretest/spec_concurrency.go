// Specs: many goroutines appending at once get contiguous, non-overlapping
// windows, and readers never see half an append.

package recordstoretest

import (
	"fmt"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// window is one append's result and the n values it wrote.
type window struct {
	res recordstore.AppendResult
	ns  []int64
}

func (s *suite) describeConcurrency() {
	Describe("concurrency", func() {
		const workers, appends, rowsPer = 8, 12, 3

		// appendAll runs workers goroutines, each making appends appends
		// of rowsPer rows to stream(w), and returns every window.
		appendAll := func(stream func(w int) string, kind string, mk func(w, i, j int) recordstore.Row) []window {
			var mu sync.Mutex
			var out []window
			var errs []error
			var wg sync.WaitGroup
			kinds := make([]string, workers) // bound, one kind per stream, declared here
			for w := range workers {
				kinds[w] = s.ensureKind(kind, stream(w))
			}
			for w := range workers {
				wg.Go(func() {
					defer GinkgoRecover()
					for i := range appends {
						rows := make([]recordstore.Row, rowsPer)
						ns := make([]int64, rowsPer)
						for j := range rows {
							rows[j] = mk(w, i, j)
							ns[j] = int64(w*10000 + i*100 + j)
						}
						res, err := s.b.Append(s.ctx, stream(w), kinds[w], rows)
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						} else {
							out = append(out, window{res, ns})
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			Expect(errs).To(BeEmpty())
			return out
		}
		eventRow := func(w, i, j int) recordstore.Row {
			return recordstore.Row{"n": int64(w*10000 + i*100 + j), "msg": fmt.Sprintf("w%d", w)}
		}

		It("gives concurrent appends to one stream contiguous, non-overlapping windows covering 1..total", func() {
			s.declare(eventKind())
			stop := make(chan struct{})
			readerDone := make(chan struct{})
			go func() {
				defer GinkgoRecover()
				defer close(readerDone)
				s.readWholeAppends("c", rowsPer, stop)
			}()
			wins := appendAll(func(int) string { return "c" }, "event", eventRow)
			close(stop)
			<-readerDone

			slices.SortFunc(wins, func(a, b window) int { return int(a.res.From - b.res.From) })
			next := int64(1)
			for _, w := range wins {
				Expect(w.res.From).To(Equal(next), "windows are contiguous and do not overlap")
				Expect(w.res.To).To(Equal(next + rowsPer - 1))
				Expect(w.res.Appended).To(Equal(int64(rowsPer)))
				next = w.res.To + 1
			}
			total := int64(workers * appends * rowsPer)
			Expect(next - 1).To(Equal(total))
			m := s.meta("c")
			Expect([]int64{m.Total, m.LowSeq, m.HighSeq}).To(Equal([]int64{total, 1, total}))
			recs := s.scan("c")
			Expect(seqs(recs)).To(Equal(seqRange(1, total)))
			for _, w := range wins {
				got := column(recs[w.res.From-1:w.res.To], "n")
				Expect(got).To(Equal([]any{w.ns[0], w.ns[1], w.ns[2]}), "the rows of one append sit in its window, in order")
			}
		})

		It("keeps concurrent appends to different streams apart", func() {
			s.declare(eventKind())
			wins := appendAll(func(w int) string { return fmt.Sprintf("w%d", w) }, "event", eventRow)
			Expect(wins).To(HaveLen(workers * appends))
			for w := range workers {
				id := fmt.Sprintf("w%d", w)
				recs := s.scan(id)
				Expect(seqs(recs)).To(Equal(seqRange(1, appends*rowsPer)))
				for _, msg := range column(recs, "msg") {
					Expect(msg).To(Equal(id))
				}
			}
		})

		It("serializes concurrent replaces of one key down to one surviving row", func() {
			s.requirePolicy(recordstore.ConflictReplace)
			s.declare(itemKind(recordstore.ConflictReplace))
			var mu sync.Mutex
			var wins []window
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					defer GinkgoRecover()
					for i := range appends {
						v := int64(w*1000 + i)
						res, err := s.b.Append(s.ctx, "hot", "item_replace", []recordstore.Row{{"id": "hot", "v": v}})
						Expect(err).NotTo(HaveOccurred())
						mu.Lock()
						wins = append(wins, window{res, []int64{v}})
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			total := int64(workers * appends)
			var replaced int64
			var last window
			for _, w := range wins {
				Expect(w.res.From).To(Equal(w.res.To))
				replaced += w.res.Replaced
				if w.res.To == total {
					last = w
				}
			}
			Expect(replaced).To(Equal(total-1), "every append but the first replaced one row")
			recs := s.scan("hot")
			Expect(seqs(recs)).To(Equal([]int64{total}))
			Expect(recs[0].Values["v"]).To(Equal(last.ns[0]), "the survivor is the row of the last window")
		})
	})
}

// readWholeAppends scans stream until stop is closed and checks that every
// scan sees whole appends of rowsPer rows numbered from 1 without holes.
func (s *suite) readWholeAppends(stream string, rowsPer int, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		recs, err := s.b.Scan(s.ctx, stream, recordstore.ScanOptions{})
		if err != nil {
			Expect(err).To(MatchError(recordstore.ErrNotFound), "before the first append")
			continue
		}
		Expect(len(recs)%rowsPer).To(BeZero(), "a scan saw part of an append")
		Expect(seqs(recs)).To(Equal(seqRange(1, int64(len(recs)))))
	}
}
