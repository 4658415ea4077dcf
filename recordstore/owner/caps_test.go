// Specs for batches over the owner's spool limits: failed at once, their
// waiters answered, their neighbours applied.

package owner_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("batches over the owner's limits", func() {
	DescribeTable("go to failed/ at once with a capacity error, and their waiters hear it",
		func(limits spool.Limits, about string) {
			path := storePath()
			s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.Spool.Limits = limits })
			Expect(s.Role()).To(Equal(owner.RoleOwner))
			rows := make([]recordstore.Row, 20)
			for i := range rows {
				rows[i] = recordstore.Row{"k": fmt.Sprintf("row-%02d", i), "msg": "twenty rows of about forty bytes"}
			}
			big := handBatch(path, "s", rows, nil)
			small := handBatch(path, "s", rows[:2], nil)

			res, err := s.Await(GinkgoT().Context(), big.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(errors.Is(res.Err(), recordstore.ErrCapacity)).To(BeTrue(), "%v", res.Err())
			expectFailed(path, big, "capacity", about)

			res, err = s.Await(GinkgoT().Context(), small.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted), "a batch within the limits is applied")
			Expect(streamKeys(s, "s")).To(Equal([]string{"row-00", "row-01"}))
		},
		Entry("more rows than MaxRows", spool.Limits{MaxRows: 10}, "too many rows"),
		Entry("more bytes than MaxBytes", spool.Limits{MaxBytes: 200}, "too large"),
	)
})
