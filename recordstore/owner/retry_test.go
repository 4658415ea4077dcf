// Specs for batches that fail transiently: retried with backoff, failed
// once the retry policy is used up, and only the batch at fault.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// flakyBackend is the SQLite backend whose AppendBatch fails as an I/O
// error would: in mode flakyStream whenever a batch with an entry for
// stream "flaky" is among those given, in mode flakyAll always (a full
// disk: failure records fail too). It counts the failures per batch id.
type flakyBackend struct {
	*sqlite.Backend
	mode  *atomic.Int32
	mu    sync.Mutex
	fails map[string]int
	// holdFailures makes the write of a failure record outlast the
	// owner: given a ctx that can end, it waits for its end and fails.
	holdFailures bool
}

const (
	flakyOff = iota
	flakyStream
	flakyAll
)

func (f *flakyBackend) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	for _, b := range batches {
		if f.holdFailures && b.Failure != nil && ctx.Done() != nil {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		hit := f.mode.Load() == flakyAll
		for _, e := range b.Entries {
			hit = hit || (f.mode.Load() == flakyStream && e.Stream == "flaky")
		}
		if hit {
			f.mu.Lock()
			f.fails[b.ID]++
			f.mu.Unlock()
			return nil, fmt.Errorf("append batch: read %s: %w", b.ID, syscall.EIO)
		}
	}
	return f.Backend.AppendBatch(ctx, batches...)
}

func (f *flakyBackend) failures(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fails[id]
}

// openFlaky opens the store here as owner over a flaky backend in mode,
// with a fast retry policy of the given attempts.
func openFlaky(ctx context.Context, path string, mode *atomic.Int32, attempts int) (*owner.Store[*flakyBackend], *flakyBackend) {
	GinkgoHelper()
	var fb *flakyBackend
	s, err := owner.Open(ctx, owner.Options[*flakyBackend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion,
		PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond,
		Retry: owner.RetryPolicy{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: attempts},
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*flakyBackend, error) {
			b, err := sqliteOpener(path)(ctx, readOnly, submit)
			if err != nil {
				return nil, err
			}
			fb = &flakyBackend{Backend: b, mode: mode, fails: map[string]int{}}
			return fb, nil
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	return s, fb
}

// outcomeOf polls the ledger's outcome of batch n ("" while it has none).
func outcomeOf(ctx context.Context, s *owner.Store[*flakyBackend], n spool.BatchName) func() recordstore.BatchOutcome {
	return func() recordstore.BatchOutcome {
		res, err := s.Backend().BatchOutcome(ctx, n.ID)
		if errors.Is(err, recordstore.ErrNotFound) {
			return ""
		}
		Expect(err).NotTo(HaveOccurred())
		return res.Outcome
	}
}

var _ = Describe("batches that fail transiently", func() {
	It("fails a batch whose transaction keeps failing once the retry policy is used up, not its neighbours; put back, it commits", func(ctx SpecContext) {
		path := storePath()
		var mode atomic.Int32
		mode.Store(flakyStream)
		s, fb := openFlaky(ctx, path, &mode, 4)
		before := handBatch(path, "s", []recordstore.Row{{"k": "before"}}, nil)
		bad := handBatch(path, "flaky", []recordstore.Row{{"k": "flaky"}}, nil)
		after := handBatch(path, "s", []recordstore.Row{{"k": "after"}}, nil)
		Eventually(outcomeOf(ctx, s, bad), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeFailed))
		for _, n := range []spool.BatchName{before, after} {
			Eventually(outcomeOf(ctx, s, n), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted),
				"a neighbour is not failed with it")
		}
		Expect(fb.failures(bad.ID)).To(BeNumerically(">=", 4), "tried as often as the policy says")
		res, err := s.Backend().BatchOutcome(ctx, bad.ID)
		Expect(err).NotTo(HaveOccurred())
		// Four or more: a try that failed in a group counts, but the batch is
		// given up only after failing alone.
		Expect(res.Err().Error()).To(And(MatchRegexp(`gave up after ([4-9]|\d\d) tries`), ContainSubstring("input/output error")))
		expectFailed(path, bad, "internal", "gave up after")

		mode.Store(flakyOff) // what failed it is gone
		Expect(spoolDir(path).Retry(ctx, bad.String())).To(Succeed())
		Eventually(outcomeOf(ctx, s, bad), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted))
	})

	It("keeps a batch waiting, and retrying, while the ledger cannot record a failure either", func(ctx SpecContext) {
		path := storePath()
		var mode atomic.Int32
		mode.Store(flakyAll) // a full disk: every transaction fails
		s, fb := openFlaky(ctx, path, &mode, 2)
		n := handBatch(path, "s", []recordstore.Row{{"k": "waits"}}, nil)
		Eventually(func() int { return fb.failures(n.ID) }, wait, 5*time.Millisecond).Should(BeNumerically(">=", 6),
			"tried on, well past the policy's two attempts")
		Expect(outcomeOf(ctx, s, n)()).To(BeEmpty())
		Expect(incoming(path)).To(ContainElement(n))
		Expect(entries(path, spool.StateFailed)).To(BeEmpty())
		st, err := s.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.LastError).To(ContainSubstring("input/output error"))

		mode.Store(flakyOff) // space freed
		Eventually(outcomeOf(ctx, s, n), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted))
	})
})
