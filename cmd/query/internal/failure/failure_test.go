package failure_test

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/cmd/query/internal/failure"
	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = DescribeTable("Code and Message",
	func(err error, code, msg string) {
		Expect(failure.Code(err)).To(Equal(code))
		Expect(failure.Message(err)).To(Equal(msg))
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
	Entry("schema conflict, a two-word sentinel",
		fmt.Errorf("declare kind jobs: %w", fmt.Errorf("%w: kind jobs: key differs", recordstore.ErrSchemaConflict)),
		"schema_conflict", "declare kind jobs: kind jobs: key differs"),
	Entry("a bare sentinel keeps its text",
		recordstore.ErrSealed, "sealed", "sealed"),
	Entry("an error wrapping no sentinel is internal and kept whole",
		fmt.Errorf("open store x: %w", errors.New("disk I/O error")), "internal", "open store x: disk I/O error"),
	Entry("a word that merely contains the sentinel's text is kept",
		recordstore.Invalidf("column invalid_at: bad"), "invalid", "column invalid_at: bad"),
	Entry("line breaks become spaces",
		recordstore.Invalidf("first\nsecond\r\nthird"), "invalid", "first second third"),
	Entry("nil", nil, "", ""),
)
