package recordstore_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("SubmitBatch", func() {
	batch := recordstore.Batch{Entries: []recordstore.BatchEntry{
		{Op: recordstore.OpDeclare, Kind: "jobs"},
		{Op: recordstore.OpAppend, Stream: "s1", Kind: "jobs"},
	}}
	answer := func(res recordstore.BatchResult, err error) recordstore.SubmitFunc {
		return func(context.Context, recordstore.Batch) (recordstore.BatchResult, error) { return res, err }
	}
	ctx := context.Background()

	It("returns an error of the submitter unchanged, with no result", func() {
		cause := errors.New("owner unreachable")
		res, err := recordstore.SubmitBatch(ctx, answer(recordstore.BatchResult{ID: "b1"}, cause), "append to s1", batch)
		Expect(err).To(BeIdenticalTo(cause))
		Expect(res.ID).To(BeEmpty())
	})

	It("wraps the batch's recorded error with what, keeping its sentinel", func() {
		res, err := recordstore.SubmitBatch(ctx, answer(recordstore.BatchResult{ID: "b1", Outcome: recordstore.OutcomeFailed,
			Error: &recordstore.BatchError{Code: "invalid", Message: "bad rows"}}, nil), "append to s1", batch)
		Expect(err).To(MatchError("append to s1: invalid: bad rows"))
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		Expect(res.ID).To(Equal("b1"))
	})

	It("refuses a result with another number of entries", func() {
		_, err := recordstore.SubmitBatch(ctx, answer(recordstore.BatchResult{ID: "b1",
			Entries: []recordstore.EntryResult{{}}}, nil), "append to s1", batch)
		Expect(err).To(MatchError("append to s1: batch b1 has 1 entry results, want 2"))
	})

	It("wraps the first refused entry's error with what", func() {
		res, err := recordstore.SubmitBatch(ctx, answer(recordstore.BatchResult{ID: "b1", Entries: []recordstore.EntryResult{
			{Op: recordstore.OpDeclare},
			{Op: recordstore.OpAppend, Error: &recordstore.BatchError{Code: "sealed", Message: "stream s1"}},
		}}, nil), "append to s1", batch)
		Expect(err).To(MatchError("append to s1: sealed: stream s1"))
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue())
		Expect(res.Entries).To(HaveLen(2))
	})

	It("returns a clean result as it is", func() {
		want := recordstore.BatchResult{ID: "b1", Entries: []recordstore.EntryResult{{Op: recordstore.OpDeclare}, {Op: recordstore.OpAppend}}}
		res, err := recordstore.SubmitBatch(ctx, answer(want, nil), "append to s1", batch)
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(want))
	})
})
