// Specs of ConfigureLookaside in a process whose SQLite is already
// initialized (the fleet's specs run with it set at start: see
// recordstore/fleet's TestMain).

package sqlite_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("ConfigureLookaside", func() {
	It("is refused with ErrTooLate once a connection was opened", func() {
		b := openAt(storePath(), sqlite.Options{})
		Expect(b.Close()).To(Succeed())
		err := sqlite.ConfigureLookaside(0, 0)
		Expect(errors.Is(err, sqlite.ErrTooLate)).To(BeTrue(), "%v", err)
	})

	DescribeTable("refuses sizes out of range with ErrInvalid",
		func(size, slots int) {
			err := sqlite.ConfigureLookaside(size, slots)
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		},
		Entry("a negative slot size", -1, 10),
		Entry("a negative count", 128, -1),
		Entry("a slot too large", sqlite.MaxLookasideSlotSize+1, 1),
		Entry("too many slots", 128, sqlite.MaxLookasideSlots+1),
	)
})
