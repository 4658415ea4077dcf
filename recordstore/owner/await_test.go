// Specs for Store.Await on batches this process did not just publish: one
// waiting in incoming/, one refused into failed/, and one nobody knows.

package owner_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Await", func() {
	It("fails at once with ErrNotFound for a batch the ledger does not hold and the spool does not either", func(ctx SpecContext) {
		s := openHere(storePath())
		actx, cancel := context.WithTimeout(ctx, 10*time.Second) // a pending error, not a hang, if it waited
		defer cancel()
		_, err := s.Await(actx, "0123456789abcdef0123456789abcdef")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("0123456789abcdef0123456789abcdef"))
		_, err = s.Await(ctx, "not-an-id")
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
	})

	It("waits for a batch still in incoming/, and answers for one refused into failed/", func(ctx SpecContext) {
		path := storePath()
		// An hour between polls and no watch: nothing drains until asked.
		s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.PollMin, o.PollMax = time.Hour, time.Hour })
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		replaceIncoming(path)
		n := handBatch(path, "s", []recordstore.Row{{"k": "waiting"}}, nil)
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := s.Await(actx, n.ID)
		cancel()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))

		bad := handBatch(path, "s", []recordstore.Row{{"k": "bad"}}, func(dir string) {
			rewriteData(dir, func([]byte) []byte { return []byte(`{"k":7}` + "\n") })
		})
		res, err = s.Await(ctx, bad.ID)
		Expect(err).NotTo(HaveOccurred(), "the outcome is known; the batch's error is in it")
		Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
		Expect(errors.Is(res.Err(), recordstore.ErrInvalid)).To(BeTrue(), "%v", res.Err())
		Eventually(func() []string { return entries(path, spool.StateFailed) }, wait, 10*time.Millisecond).
			Should(ContainElement(bad.String()))
		res, err = s.Await(ctx, bad.ID)
		Expect(err).NotTo(HaveOccurred(), "asked again once it is in failed/")
		Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
	})

	It("waits for the new outcome of a refused batch put back for a retry, not its recorded failure", func(ctx SpecContext) {
		path := storePath()
		s, bad, _ := refusedIntoFailed(ctx, path)

		rewriteData(spoolDir(path).Path(spool.StateFailed, bad.String()), func([]byte) []byte { return []byte(`{"k":"fixed"}` + "\n") })
		Expect(spoolDir(path).Retry(ctx, bad.String())).To(Succeed())
		_, err := s.Outcome(ctx, bad.ID)
		var pe *owner.PendingError
		Expect(errors.As(err, &pe)).To(BeTrue(), "put back, it waits for its retry: %v", err)

		actx, cancel := context.WithTimeout(ctx, 10*time.Second) // a pending error, not a hang, if it waited
		defer cancel()
		res, err := s.Await(actx, bad.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted), "the retry's outcome, not the failure this process remembers")
		Expect(streamKeys(s, "s")).To(Equal([]string{"fixed"}))
	})

	It("answers a refused batch whose ledger row was swept from its error.json, and Outcome tells without waiting", func(ctx SpecContext) {
		path := storePath()
		s, bad, first := refusedIntoFailed(ctx, path)
		n, err := s.Backend().SweepBatches(ctx, time.Now().Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 1), "the ledger row is swept")

		actx, cancel := context.WithTimeout(ctx, 10*time.Second) // a pending error, not a hang, if it waited
		defer cancel()
		for _, ask := range []func(context.Context, string) (recordstore.BatchResult, error){s.Await, s.Outcome} {
			res, err := ask(actx, bad.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.ID).To(Equal(bad.ID))
			Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(res.Error).NotTo(BeNil())
			Expect(res.Error.Code).To(Equal("invalid"))
			Expect(res.Error.Message).To(Equal(first.Error.Message), "what error.json says, as the ledger said it")
		}

		waiting := handBatch(path, "s", []recordstore.Row{{"k": "waiting"}}, nil)
		_, err = s.Outcome(ctx, waiting.ID)
		var pe *owner.PendingError
		Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		Expect(pe.BatchID).To(Equal(waiting.ID))
		Expect(outcome(s, waiting)).To(BeEmpty(), "Outcome did not wait for it, nor have it applied")
		_, err = s.Outcome(ctx, "0123456789abcdef0123456789abcdef")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		res, err := s.Await(ctx, waiting.ID)
		Expect(err).NotTo(HaveOccurred())
		res2, err := s.Outcome(ctx, waiting.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(res2).To(Equal(res))
	})
})

// refusedIntoFailed opens the store here as owner with neither polls nor
// a watch (batches wait until asked for), hands it a batch whose row does
// not fit, awaits its refusal and waits until it is in failed/.
func refusedIntoFailed(ctx context.Context, path string) (*sqliteStore, spool.BatchName, recordstore.BatchResult) {
	GinkgoHelper()
	s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.PollMin, o.PollMax = time.Hour, time.Hour })
	replaceIncoming(path)
	bad := handBatch(path, "s", []recordstore.Row{{"k": "bad"}}, func(dir string) {
		rewriteData(dir, func([]byte) []byte { return []byte(`{"k":7}` + "\n") })
	})
	res, err := s.Await(ctx, bad.ID)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
	Eventually(func() []string { return entries(path, spool.StateFailed) }, wait, 10*time.Millisecond).
		Should(ContainElement(bad.String()))
	return s, bad, res
}
