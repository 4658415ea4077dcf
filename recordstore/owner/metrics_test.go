// Specs for the measurement hooks (Options.Metrics): each is called on the
// path it measures, with what happened there.

package owner_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// metricsRecorder records every hook call.
type metricsRecorder struct {
	mu         sync.Mutex
	appends    map[owner.Role][]int // rows of each append, by role
	ingested   []int                // rows of each ingested batch
	latencies  []time.Duration
	failed     int
	retried    int
	groups     []int
	awaited    []bool
	promotions []int64
}

func (r *metricsRecorder) hooks() owner.Metrics {
	lock := func(f func()) { r.mu.Lock(); defer r.mu.Unlock(); f() }
	return owner.Metrics{
		Append: func(role owner.Role, rows int) { lock(func() { r.appends[role] = append(r.appends[role], rows) }) },
		Ingested: func(rows int, d time.Duration) {
			lock(func() { r.ingested = append(r.ingested, rows); r.latencies = append(r.latencies, d) })
		},
		Failed:      func() { lock(func() { r.failed++ }) },
		Retried:     func() { lock(func() { r.retried++ }) },
		GroupCommit: func(n int) { lock(func() { r.groups = append(r.groups, n) }) },
		Awaited:     func(_ time.Duration, ok bool) { lock(func() { r.awaited = append(r.awaited, ok) }) },
		Promoted:    func(epoch int64) { lock(func() { r.promotions = append(r.promotions, epoch) }) },
	}
}

// read returns a value read under the recorder's lock.
func read[T any](r *metricsRecorder, f func() T) func() T {
	return func() T { r.mu.Lock(); defer r.mu.Unlock(); return f() }
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

var _ = Describe("the measurement hooks", func() {
	It("report the owner's appends, the batches it ingests with their rows and latency, its group commits, failures and awaits", func(ctx SpecContext) {
		path := storePath()
		rec := &metricsRecorder{appends: map[owner.Role][]int{}}
		s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.Metrics = rec.hooks() })
		Expect(s.Role()).To(Equal(owner.RoleOwner))

		_, err := s.Append(ctx, "s", "event", []recordstore.Row{{"k": "a"}, {"k": "b"}}, owner.AppendOptions{Declare: eventKind()})
		Expect(err).NotTo(HaveOccurred())
		Expect(read(rec, func() map[owner.Role][]int { return rec.appends })()).To(Equal(map[owner.Role][]int{owner.RoleOwner: {2}}))

		n := handBatch(path, "s", []recordstore.Row{{"k": "c"}, {"k": "d"}, {"k": "e"}}, nil)
		res, err := s.Await(ctx, n.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Eventually(read(rec, func() []int { return rec.ingested }), wait, 5*time.Millisecond).Should(Equal([]int{3}))
		Expect(read(rec, func() []time.Duration { return rec.latencies })()).To(ConsistOf(BeNumerically(">=", 0)))
		Expect(read(rec, func() int { return sum(rec.groups) })()).To(Equal(1), "one batch committed, in one transaction")
		Expect(read(rec, func() []bool { return rec.awaited })()).To(ContainElement(true))

		bad := handBatch(path, "s", []recordstore.Row{{"k": "bad"}}, func(dir string) {
			rewriteData(dir, func([]byte) []byte { return []byte(`{"k":7}` + "\n") })
		})
		_, err = s.Await(ctx, bad.ID)
		Expect(err).NotTo(HaveOccurred())
		Eventually(read(rec, func() int { return rec.failed }), wait, 5*time.Millisecond).Should(Equal(1))
		Expect(read(rec, func() []int { return rec.ingested })()).To(Equal([]int{3}), "a failed batch is not ingested")
		Expect(read(rec, func() []int64 { return rec.promotions })()).To(BeEmpty(), "the first owner was not promoted")

	})

	It("report a batch held for another try after a transient failure", func(ctx SpecContext) {
		path := storePath()
		rec := &metricsRecorder{appends: map[owner.Role][]int{}}
		var mode atomic.Int32
		mode.Store(flakyStream)
		s, err := owner.Open(ctx, owner.Options[*flakyBackend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion,
			PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond,
			Retry:   owner.RetryPolicy{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 1000, For: time.Hour},
			Metrics: rec.hooks(),
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*flakyBackend, error) {
				b, err := sqliteOpener(path)(ctx, readOnly, submit)
				if err != nil {
					return nil, err
				}
				return &flakyBackend{Backend: b, mode: &mode, fails: map[string]int{}}, nil
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		n := handBatch(path, "flaky", []recordstore.Row{{"k": "flaky"}}, nil)
		Eventually(read(rec, func() int { return rec.retried }), wait, 5*time.Millisecond).Should(BeNumerically(">=", 2))
		Expect(read(rec, func() int { return rec.failed })()).To(BeZero(), "held, not failed")
		mode.Store(flakyOff)
		Eventually(outcomeOf(ctx, s, n), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted))
		Eventually(read(rec, func() []int { return rec.ingested }), wait, 5*time.Millisecond).Should(Equal([]int{1}))
	})
})
