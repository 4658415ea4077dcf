package recordstore_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

var _ = Describe("error codes", func() {
	DescribeTable("map each sentinel to its code and back",
		func(sentinel error, code string) {
			wrapped := fmt.Errorf("append jobs: %w", sentinel)
			Expect(recordstore.Code(wrapped)).To(Equal(code))
			Expect(recordstore.SentinelForCode(code)).To(BeIdenticalTo(sentinel))
		},
		Entry(nil, recordstore.ErrInvalid, "invalid"),
		Entry(nil, recordstore.ErrNotFound, "not_found"),
		Entry(nil, recordstore.ErrSealed, "sealed"),
		Entry(nil, recordstore.ErrCapacity, "capacity"),
		Entry(nil, recordstore.ErrSchemaConflict, "schema_conflict"),
		Entry(nil, recordstore.ErrUnsupported, "unsupported"),
		Entry(nil, recordstore.ErrDiskFull, "disk_full"),
	)

	It("calls an unclassified error internal and nil nothing", func() {
		Expect(recordstore.Code(errors.New("disk on fire"))).To(Equal(recordstore.CodeInternal))
		Expect(recordstore.Code(nil)).To(Equal(""))
		Expect(recordstore.SentinelForCode(recordstore.CodeInternal)).To(BeNil())
	})

	It("finds ErrFsync in every error the durable-file helper reports for a failed fsync, with code internal", func() {
		h := &fsutil.Helper{FS: syncFailsFS{}}
		err := h.WriteFile(GinkgoT().TempDir()+"/f", []byte("x"), fsutil.FileMode)
		Expect(errors.Is(err, recordstore.ErrFsync)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal(recordstore.CodeInternal))
		Expect(recordstore.SentinelForCode(recordstore.CodeInternal)).To(BeNil())
	})
})

// syncFailsFS is the real file system whose folder fsyncs fail.
type syncFailsFS struct{ fsutil.OS }

func (syncFailsFS) SyncDir(string) error { return errors.New("input/output error") }

var _ = Describe("Error", func() {
	It("carries its code and message as fields and prints the sentinel's text before the message", func() {
		err := recordstore.Errorf(recordstore.ErrNotFound, "stream %s", "s1")
		var e *recordstore.Error
		Expect(errors.As(err, &e)).To(BeTrue())
		Expect(e.Code).To(Equal("not_found"))
		Expect(e.Msg).To(Equal("stream s1"))
		Expect(e.Err).To(BeNil())
		Expect(err.Error()).To(Equal("not found: stream s1"))
		Expect(recordstore.Code(err)).To(Equal("not_found"))
		Expect(recordstore.Message(err)).To(Equal("stream s1"))
	})

	DescribeTable("matches the sentinel of its code, and only that one",
		func(sentinel error, code string) {
			err := recordstore.Errorf(sentinel, "x")
			Expect(errors.Is(err, sentinel)).To(BeTrue())
			Expect(recordstore.Code(err)).To(Equal(code))
			for _, other := range []error{recordstore.ErrInvalid, recordstore.ErrNotFound, recordstore.ErrSealed,
				recordstore.ErrCapacity, recordstore.ErrSchemaConflict, recordstore.ErrUnsupported,
				recordstore.ErrClosed, recordstore.ErrReadOnly} {
				if other != sentinel {
					Expect(errors.Is(err, other)).To(BeFalse(), "%v", other)
				}
			}
		},
		Entry("invalid", recordstore.ErrInvalid, "invalid"),
		Entry("not found", recordstore.ErrNotFound, "not_found"),
		Entry("sealed", recordstore.ErrSealed, "sealed"),
		Entry("capacity", recordstore.ErrCapacity, "capacity"),
		Entry("schema conflict", recordstore.ErrSchemaConflict, "schema_conflict"),
		Entry("unsupported", recordstore.ErrUnsupported, "unsupported"),
		Entry("closed", recordstore.ErrClosed, "closed"),
		Entry("read only", recordstore.ErrReadOnly, "read_only"),
	)

	It("is what Invalidf returns", func() {
		err := recordstore.Invalidf("kind %s: no columns", "jobs")
		Expect(err).To(Equal(&recordstore.Error{Code: "invalid", Msg: "kind jobs: no columns"}))
		Expect(err.Error()).To(Equal("invalid: kind jobs: no columns"))
	})

	It("keeps its code, and is found by errors.As, under %w wrapping", func() {
		err := fmt.Errorf("append to s1: %w", fmt.Errorf("batch b1: %w", recordstore.Errorf(recordstore.ErrSealed, "stream s1 is sealed")))
		var e *recordstore.Error
		Expect(errors.As(err, &e)).To(BeTrue())
		Expect(e.Msg).To(Equal("stream s1 is sealed"))
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue())
		Expect(recordstore.Code(err)).To(Equal("sealed"))
		Expect(err.Error()).To(Equal("append to s1: batch b1: sealed: stream s1 is sealed"))
	})

	It("keeps a cause given with %w, for errors.Is and errors.As", func() {
		cause := &os.PathError{Op: "open", Path: "k.json", Err: os.ErrNotExist}
		err := recordstore.Invalidf("kind file %s: %w", "k.json", cause)
		var e *recordstore.Error
		Expect(errors.As(err, &e)).To(BeTrue())
		Expect(e.Err).NotTo(BeNil())
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		var pe *os.PathError
		Expect(errors.As(err, &pe)).To(BeTrue())
		Expect(recordstore.Code(err)).To(Equal("invalid"))
		Expect(err.Error()).To(Equal("invalid: kind file k.json: open k.json: file does not exist"))
	})

	It("gives code internal for a sentinel that has no code", func() {
		err := recordstore.Errorf(errors.New("other"), "x")
		Expect(recordstore.Code(err)).To(Equal(recordstore.CodeInternal))
		Expect(err.Error()).To(Equal("internal: x"))
	})

	It("prints the bare sentinel's text when it has no message", func() {
		err := &recordstore.Error{Code: "sealed"}
		Expect(err.Error()).To(Equal("sealed"))
		Expect(recordstore.Message(err)).To(Equal("sealed"))
		Expect(recordstore.InvalidText(recordstore.Invalidf(""))).To(Equal("invalid"))
	})

	It("gives its message whole, even where the message itself starts a segment with the sentinel's text", func() {
		// A file named "invalid": the name is part of the message, not a code.
		err := recordstore.Invalidf("%s: no rows (empty input)", "invalid")
		Expect(recordstore.Message(err)).To(Equal("invalid: no rows (empty input)"))
		Expect(recordstore.InvalidText(err)).To(Equal("invalid: no rows (empty input)"))
		Expect(recordstore.AsBatchError(err)).To(Equal(&recordstore.BatchError{Code: "invalid", Message: "invalid: no rows (empty input)"}))
	})

	It("gives its message whole when its %w cause has no code, whatever the cause's text says", func() {
		err := recordstore.Errorf(recordstore.ErrNotFound, "spool batch %s: %w", "b1", errors.New("not found: no such folder"))
		Expect(recordstore.Code(err)).To(Equal("not_found"))
		Expect(recordstore.Message(err)).To(Equal("spool batch b1: not found: no such folder"))
	})

	It("drops the sentinel's text its %w cause of the same code brought into the message", func() {
		err := recordstore.Invalidf("kind file %s: %w", "k.json", recordstore.Invalidf("duration %q", "x"))
		Expect(err.Error()).To(Equal(`invalid: kind file k.json: invalid: duration "x"`))
		Expect(recordstore.Message(err)).To(Equal(`kind file k.json: duration "x"`))
		Expect(recordstore.AsBatchError(err).Message).To(Equal(`kind file k.json: invalid: duration "x"`))
	})

	It("puts a package sentinel's message in front, keeps its code and matches it", func() {
		errCorrupt := recordstore.Invalidf("corrupt parquet file")
		err := recordstore.Errorf(errCorrupt, "page %d", 3)
		Expect(err.Error()).To(Equal("invalid: corrupt parquet file: page 3"))
		Expect(errors.Is(err, errCorrupt)).To(BeTrue())
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		Expect(errors.Is(err, recordstore.Invalidf("corrupt parquet file"))).To(BeFalse(), "a sentinel is matched by identity")
		Expect(recordstore.Code(err)).To(Equal("invalid"))
		Expect(recordstore.Message(err)).To(Equal("corrupt parquet file: page 3"))
		Expect(recordstore.AsBatchError(err).Message).To(Equal("corrupt parquet file: page 3"))
		Expect(recordstore.InvalidText(err)).To(Equal("corrupt parquet file: page 3"))
	})

	It("keeps both a package sentinel and a %w cause", func() {
		errCorrupt := recordstore.Invalidf("corrupt parquet file")
		err := recordstore.Errorf(errCorrupt, "footer: %w", io.ErrUnexpectedEOF)
		Expect(err.Error()).To(Equal("invalid: corrupt parquet file: footer: unexpected EOF"))
		Expect(errors.Is(err, errCorrupt)).To(BeTrue())
		Expect(errors.Is(err, io.ErrUnexpectedEOF)).To(BeTrue())
		Expect(recordstore.Message(err)).To(Equal("corrupt parquet file: footer: unexpected EOF"))
	})

	It("InvalidText reads the message of an invalid Error and keeps any other error whole", func() {
		Expect(recordstore.InvalidText(recordstore.Invalidf("1.5 is not an integer"))).To(Equal("1.5 is not an integer"))
		Expect(recordstore.InvalidText(fmt.Errorf("column n: %w", recordstore.Invalidf("x")))).To(Equal("column n: invalid: x"))
		Expect(recordstore.InvalidText(recordstore.Errorf(recordstore.ErrNotFound, "stream s"))).To(Equal("not found: stream s"))
		Expect(recordstore.InvalidText(errors.New("plain"))).To(Equal("plain"))
	})
})
