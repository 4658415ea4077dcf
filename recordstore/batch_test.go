package recordstore_test

import (
	"encoding/json"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("BatchError", func() {
	It("keeps its sentinel across a JSON round trip", func() {
		orig := fmt.Errorf("append s1: %w", recordstore.Invalidf("kind jobs: column n (integer): 1.5 is not an integer"))
		be := recordstore.AsBatchError(orig)
		Expect(be.Code).To(Equal("invalid"))
		Expect(be.Message).To(Equal("append s1: invalid: kind jobs: column n (integer): 1.5 is not an integer"))
		res := recordstore.BatchResult{ID: "b1", Outcome: recordstore.OutcomeCommitted,
			Entries: []recordstore.EntryResult{{Op: recordstore.OpAppend, Stream: "s1", Error: be}}}
		raw, err := json.Marshal(res)
		Expect(err).NotTo(HaveOccurred())
		var back recordstore.BatchResult
		Expect(json.Unmarshal(raw, &back)).To(Succeed())
		err = back.Err()
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeFalse())
		Expect(recordstore.Code(err)).To(Equal("invalid"))
	})

	It("reports codes it has no sentinel for as they are", func() {
		err := error(&recordstore.BatchError{Code: "pending", Message: "batch b1"})
		Expect(recordstore.Code(err)).To(Equal("pending"))
		Expect(err.Error()).To(Equal("pending: batch b1"))
	})

	It("strips the sentinel's text from a message", func() {
		Expect(recordstore.Message(fmt.Errorf("%w: stream s", recordstore.ErrNotFound))).To(Equal("stream s"))
		Expect(recordstore.Message(errors.New("plain"))).To(Equal("plain"))
		Expect(recordstore.AsBatchError(nil)).To(BeNil())
	})

	It("finds a batch's schema by kind name", func() {
		b := recordstore.Batch{Schemas: []recordstore.Kind{{Name: "a"}, {Name: "b"}}}
		k, ok := b.Schema("b")
		Expect(ok).To(BeTrue())
		Expect(k.Name).To(Equal("b"))
		_, ok = b.Schema("c")
		Expect(ok).To(BeFalse())
	})
})
