package recordstore_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
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
	)

	It("calls an unclassified error internal and nil nothing", func() {
		Expect(recordstore.Code(errors.New("disk on fire"))).To(Equal(recordstore.CodeInternal))
		Expect(recordstore.Code(nil)).To(Equal(""))
		Expect(recordstore.SentinelForCode(recordstore.CodeInternal)).To(BeNil())
	})
})
