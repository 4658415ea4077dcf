// Specs for a poison batch: one that fails alone with the same internal
// error every time is failed after RepeatLimit tries, counted across
// owners, and its waiter answered; and a batch whose producer's last seq
// the ledger cannot tell is held, not applied out of order.

package owner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// openPoisoned opens the store here as owner over a flaky backend that
// fails every batch with an entry for stream "flaky" (flakyStream), with a
// retry policy that would allow a hundred tries, minRetry apart at first,
// logging at level Info to logs when it is not nil; hold is the backend's
// holdFailures. The caller closes it.
func openPoisoned(ctx context.Context, path string, minRetry time.Duration, logs io.Writer, hold bool) (*owner.Store[*flakyBackend], *flakyBackend) {
	GinkgoHelper()
	var mode atomic.Int32
	mode.Store(flakyStream)
	var fb *flakyBackend
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, err := owner.Open(ctx, owner.Options[*flakyBackend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion, Logger: logger,
		PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond,
		Retry: owner.RetryPolicy{Min: minRetry, Max: 2 * minRetry, Attempts: 100, For: time.Hour},
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*flakyBackend, error) {
			b, err := sqliteOpener(path)(ctx, readOnly, submit)
			if err != nil {
				return nil, err
			}
			fb = &flakyBackend{Backend: b, mode: &mode, fails: map[string]int{}, holdFailures: hold}
			return fb, nil
		},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(s.Role()).To(Equal(owner.RoleOwner))
	return s, fb
}

// hwBackend is the SQLite backend whose ProducerSeq fails while fail is
// set, as a ledger read would on an I/O error.
type hwBackend struct {
	*sqlite.Backend
	fail  *atomic.Bool
	reads *atomic.Int32 // failed reads
}

func (h *hwBackend) ProducerSeq(ctx context.Context, instance string) (int64, error) {
	if h.fail.Load() {
		h.reads.Add(1)
		return 0, errors.New("read ledger: disk I/O error")
	}
	return h.Backend.ProducerSeq(ctx, instance)
}

var _ = Describe("a batch that fails alone with the same internal error every time", func() {
	It("is failed after RepeatLimit tries, though the retry policy allows many more, and its waiter answered", func(ctx SpecContext) {
		path := storePath()
		logs := gbytes.NewBuffer() // safe for the logger's goroutines
		s, fb := openPoisoned(ctx, path, 5*time.Millisecond, logs, false)
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		bad := handBatch(path, "flaky", []recordstore.Row{{"k": "poison"}}, nil)
		resp, err := ingestWait(s.Paths().Socket, bad, wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Results).To(HaveLen(1))
		Expect(resp.Results[0].Done).To(BeTrue(), "the waiter is answered")
		Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeFailed))
		expectFailed(path, bad, "internal", "gave up after 5 tries")
		Expect(fb.failures(bad.ID)).To(Equal(owner.RepeatLimit))
		Expect(entries(path, spool.StateFailed)).To(ConsistOf(bad.String()))

		By("each try is logged once, with the batch, its attempt and the error")
		var lines []string
		for _, l := range strings.Split(string(logs.Contents()), "\n") {
			if strings.Contains(l, bad.ID) {
				lines = append(lines, l)
			}
		}
		Expect(lines).To(HaveLen(owner.RepeatLimit), "one line per try:\n%s", strings.Join(lines, "\n"))
		for i, l := range lines {
			msg := `msg="batch failed; will retry"`
			if i == owner.RepeatLimit-1 {
				msg = `msg="batch failed"`
				Expect(l).To(ContainSubstring("gave up after 5 tries"))
			}
			Expect(l).To(ContainSubstring(msg))
			Expect(l).To(ContainSubstring(" batch=%s attempt=%d ", bad, i+1))
			Expect(l).To(ContainSubstring("input/output error"))
		}
	})

	It("counts its tries across owners, so that owners that each try it once fail it at the fifth", func(ctx SpecContext) {
		path := storePath()
		bad := handBatch(path, "flaky", []recordstore.Row{{"k": "poison"}}, nil)
		for try := 1; try < owner.RepeatLimit; try++ {
			// A retry delay of an hour: each owner tries it once.
			s, fb := openPoisoned(ctx, path, time.Hour, nil, false)
			Eventually(func() int { return fb.failures(bad.ID) }, wait, 5*time.Millisecond).Should(Equal(1))
			Expect(s.Close()).To(Succeed(), "its own work done, an owner closes without error")
			Expect(incoming(path)).To(ContainElement(bad), "still to be retried after try %d", try)
		}
		s, _ := openPoisoned(ctx, path, time.Hour, nil, false)
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		expectFailed(path, bad, "internal", "gave up after 5 tries")
		Eventually(outcomeOf(ctx, s, bad), wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeFailed))
		Expect(entries(path, spool.StateFailed+"/"+spool.State(bad.String()))).NotTo(ContainElement(spool.AttemptsFile))
	})

	It("is failed at its fifth try even when the owner closes while recording the failure", func(ctx SpecContext) {
		path := storePath()
		bad := handBatch(path, "flaky", []recordstore.Row{{"k": "poison"}}, nil)
		fourth := spool.Attempts{Format: 1, Batch: bad.String(), Repeats: owner.RepeatLimit - 1, LastAt: time.Now().UTC(),
			Error: fmt.Sprintf("append batch: read %s: %v", bad.ID, syscall.EIO)}
		Expect(spoolDir(path).WriteAttempts(ctx, fourth)).To(Succeed(), "four owners tried it before")
		s, fb := openPoisoned(ctx, path, time.Hour, nil, true)
		Eventually(func() int { return fb.failures(bad.ID) }, wait, 5*time.Millisecond).Should(Equal(1))
		Expect(s.Close()).To(Succeed())
		expectFailed(path, bad, "internal", "gave up after 5 tries")
	})
})

var _ = Describe("a batch whose producer's last seq the ledger cannot tell", func() {
	It("is held, and applied in order once the ledger answers", func(ctx SpecContext) {
		path := storePath()
		id := spool.NewIdentity("hand")
		first := handBatchAs(path, id, 1, spool.StateIncoming, "s", []recordstore.Row{{"k": "one"}}, nil)
		s1, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{Path: path, Open: sqliteOpener(path),
			CatalogVersion: sqlite.CatalogVersion, PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() recordstore.BatchOutcome { return outcome(s1, first) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))
		Expect(s1.Close()).To(Succeed())

		// A new owner, which has not read the producer's last seq yet,
		// finds seq 3 while the ledger cannot be read.
		third := handBatchAs(path, id, 3, spool.StateIncoming, "s", []recordstore.Row{{"k": "three"}}, nil)
		var fail atomic.Bool
		var reads atomic.Int32
		fail.Store(true)
		s, err := owner.Open(ctx, owner.Options[*hwBackend]{Path: path, CatalogVersion: sqlite.CatalogVersion,
			PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond, GapWait: 10 * time.Minute,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*hwBackend, error) {
				b, err := sqliteOpener(path)(ctx, readOnly, submit)
				if err != nil {
					return nil, err
				}
				return &hwBackend{Backend: b, fail: &fail, reads: &reads}, nil
			}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Eventually(reads.Load, wait, 5*time.Millisecond).Should(BeNumerically(">=", 3), "read again at later drains")
		res, err := s.Backend().BatchOutcome(ctx, third.ID)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "seq 3 not applied: %v %v", res, err)
		Expect(incoming(path)).To(ContainElement(third))

		fail.Store(false)
		second := handBatchAs(path, id, 2, spool.StateIncoming, "s", []recordstore.Row{{"k": "two"}}, nil)
		Eventually(func() recordstore.BatchOutcome {
			res, err := s.Backend().BatchOutcome(ctx, third.ID)
			if err != nil {
				return ""
			}
			return res.Outcome
		}, wait, 5*time.Millisecond).Should(Equal(recordstore.OutcomeCommitted))
		recs, err := s.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		keys := []string{}
		for _, r := range recs {
			keys = append(keys, r.Values["k"].(string))
		}
		Expect(keys).To(Equal([]string{"one", "two", "three"}), "in the producer's order; seq 2 is %s", second)
	})
})
