// Many followers at once: 500 concurrent follow clients of one stream over
// HTTP all see every row, and the process's goroutines and heap do not
// grow with the rows sent.

package recordresults_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// inUse returns the goroutines and the live heap after a GC.
func inUse() (int, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

var _ = Describe("Five hundred concurrent followers", Label("integration"), func() {
	It("all see every row, with goroutines and heap bounded per follower and flat in the rows", func() {
		const followers, rounds, perRound = 500, 20, 10
		a := newAPIServer(recordresults.HandlerOptions{}, false)
		a.appendMsgs("busy", "first")
		g0, h0 := inUse()

		tr := &http.Transport{MaxIdleConnsPerHost: followers}
		DeferCleanup(tr.CloseIdleConnections)
		client := &http.Client{Transport: tr}
		ctx, cancel := context.WithCancel(context.Background())
		DeferCleanup(cancel)

		var (
			wg      sync.WaitGroup
			started sync.WaitGroup
			bad     atomic.Int64 // followers that saw a row out of place
			done    atomic.Int64 // followers that saw every row and the end
		)
		total := 1 + rounds*perRound
		started.Add(followers)
		for range followers {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.srv.URL+"/api/v1/streams/busy/follow", nil)
				Expect(err).NotTo(HaveOccurred())
				resp, err := client.Do(req)
				Expect(err).NotTo(HaveOccurred())
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				seen := 0
				for sc.Scan() {
					seen++
					if sc.Text() != row(seen, msgOf(seen)) {
						bad.Add(1)
					}
					if seen == 1 {
						started.Done()
					}
				}
				if seen == total {
					done.Add(1)
				}
			}()
		}
		started.Wait()
		g1, h1 := inUse()
		for r := range rounds {
			msgs := make([]string, perRound)
			for i := range msgs {
				msgs[i] = msgOf(2 + r*perRound + i)
			}
			a.appendMsgs("busy", msgs...)
		}
		Eventually(func() int64 { return a.highSeq("busy") }).Should(Equal(int64(total)))
		// Followers still reading the last rows hold a read transaction
		// each for a moment: wait for them to settle back to waiting.
		var g2 int
		var h2 uint64
		Eventually(func() int {
			g2, h2 = inUse()
			return g2
		}, apiWait).Should(BeNumerically("<=", g1+followers/10), "goroutines do not grow with the rows sent")
		_, err := a.b.Seal(context.Background(), "busy")
		Expect(err).NotTo(HaveOccurred())
		wg.Wait()

		Expect(bad.Load()).To(BeZero(), "every follower saw the rows in order")
		Expect(done.Load()).To(Equal(int64(followers)), "every follower saw every row and the end at seal")
		perFollower := float64(g1-g0) / followers
		Expect(perFollower).To(BeNumerically("<=", 8), "goroutines per follower (client and server sides)")
		Expect(float64(h1-min(h0, h1))/followers).To(BeNumerically("<", 256<<10), "heap per waiting follower")
		Expect(float64(h2-min(h1, h2))).To(BeNumerically("<", 64<<20), "heap after 200 rows to 500 followers")
		GinkgoWriter.Printf("goroutines %d → %d → %d, heap %d → %d → %d\n", g0, g1, g2, h0, h1, h2)
	})
})

// msgOf is the message of row seq of the busy stream.
func msgOf(seq int) string {
	if seq == 1 {
		return "first"
	}
	return fmt.Sprintf("m%d", seq)
}

// highSeq returns a stream's last seq.
func (a *apiServer) highSeq(stream string) int64 {
	m, err := a.b.Meta(context.Background(), stream)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return m.HighSeq
}
