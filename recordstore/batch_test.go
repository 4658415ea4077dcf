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

	It("keeps the text after the sentinel as it is in a BatchError", func() {
		be := recordstore.AsBatchError(fmt.Errorf("%w: kind file k.json: %w", recordstore.ErrInvalid, recordstore.Invalidf("duration")))
		Expect(be.Message).To(Equal("kind file k.json: invalid: duration"))
		Expect(recordstore.Message(be)).To(Equal("kind file k.json: duration"))
	})

	DescribeTable("Message strips the code's sentinel from every segment, on one line",
		func(err error, code, msg string) {
			Expect(recordstore.Code(err)).To(Equal(code))
			Expect(recordstore.Message(err)).To(Equal(msg))
		},
		Entry("a sentinel's text is dropped from the front",
			recordstore.Invalidf("kind jobs: no columns"), "invalid", "kind jobs: no columns"),
		Entry("not found, whose text differs from its code",
			fmt.Errorf("%w: stream s1", recordstore.ErrNotFound), "not_found", "stream s1"),
		Entry("the sentinel's text after a context prefix",
			fmt.Errorf("read meta of stream s1: %w", fmt.Errorf("%w: stream s1", recordstore.ErrNotFound)),
			"not_found", "read meta of stream s1: stream s1"),
		Entry("the sentinel's text repeated by nested wrapping",
			fmt.Errorf("%w: kind file k.json: %w", recordstore.ErrInvalid, recordstore.Invalidf("duration %q", "x")),
			"invalid", `kind file k.json: duration "x"`),
		Entry("the sentinel's text twice in a row",
			fmt.Errorf("append to s1: %w", fmt.Errorf("%w: %w", recordstore.ErrSealed, fmt.Errorf("%w: stream s1 is sealed", recordstore.ErrSealed))),
			"sealed", "append to s1: stream s1 is sealed"),
		Entry("the code of a recorded error, which differs from its sentinel's text",
			fmt.Errorf("batch b1: %w", &recordstore.BatchError{Code: "schema_conflict", Message: "kind ev: key differs"}),
			"schema_conflict", "batch b1: kind ev: key differs"),
		Entry("schema conflict, a two-word sentinel",
			fmt.Errorf("declare kind jobs: %w", fmt.Errorf("%w: kind jobs: key differs", recordstore.ErrSchemaConflict)),
			"schema_conflict", "declare kind jobs: kind jobs: key differs"),
		Entry("a recorded BatchError, whose code comes first in its text",
			fmt.Errorf("append to s1: %w", &recordstore.BatchError{Code: "invalid", Message: "append to s1: invalid: column n"}),
			"invalid", "append to s1: append to s1: column n"),
		Entry("a code without a sentinel keeps the text",
			&recordstore.BatchError{Code: "pending", Message: "batch b1"}, "pending", "pending: batch b1"),
		Entry("a bare sentinel keeps its text",
			recordstore.ErrSealed, "sealed", "sealed"),
		Entry("an error wrapping no sentinel is internal and kept whole",
			fmt.Errorf("open store x: %w", errors.New("disk I/O error")), "internal", "open store x: disk I/O error"),
		Entry("a word that merely contains the sentinel's text is kept",
			recordstore.Invalidf("column invalid_at: bad"), "invalid", "column invalid_at: bad"),
		Entry("a segment that only starts with the sentinel's word is kept",
			recordstore.Invalidf("invalidated: x"), "invalid", "invalidated: x"),
		Entry("line breaks become spaces",
			recordstore.Invalidf("first\nsecond\r\nthird"), "invalid", "first second third"),
		Entry("nil", nil, "", ""),
	)

	It("finds a batch's schema by kind name", func() {
		b := recordstore.Batch{Schemas: []recordstore.Kind{{Name: "a"}, {Name: "b"}}}
		k, ok := b.Schema("b")
		Expect(ok).To(BeTrue())
		Expect(k.Name).To(Equal("b"))
		_, ok = b.Schema("c")
		Expect(ok).To(BeFalse())
	})
})
