package recordstore_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/fsutil"
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
