// Specs for Remap and Remapper: column order, added and missing columns,
// type conflicts and the checks on each row.

package recordstore_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Remap", func() {
	// from is a batch's schema; to the stored one with a column more, in
	// another order.
	from := &recordstore.Kind{Name: "jobs", Key: []string{"id"}, Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "ok", Type: recordstore.TypeBool},
	}}
	to := &recordstore.Kind{Name: "jobs", Key: []string{"id"}, Columns: []recordstore.Column{
		{Name: "extra", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "id", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
	}}

	It("moves values into the stored column order, nulls for columns the row lacks", func() {
		got, err := recordstore.Remap(from, to, recordstore.Values{"a", int64(7), int64(1)})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(recordstore.Values{nil, int64(1), "a", int64(7)}))
	})

	It("passes rows through when the column lists are equal", func() {
		m, err := recordstore.NewRemapper(from, from)
		Expect(err).NotTo(HaveOccurred())
		in := recordstore.Values{"a", nil, int64(0)}
		got, err := m.Remap(in)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(in))
	})

	DescribeTable("refuses a column the stored kind lacks or types differently",
		func(col recordstore.Column) {
			f := *from
			f.Columns = append([]recordstore.Column{col}, from.Columns...)
			_, err := recordstore.NewRemapper(&f, to)
			Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
			Expect(err.Error()).To(ContainSubstring(col.Name))
		},
		Entry("a missing column", recordstore.Column{Name: "other", Type: recordstore.TypeString}),
		Entry("another type", recordstore.Column{Name: "extra", Type: recordstore.TypeString}),
	)

	DescribeTable("refuses a row that is not stored values of its kind",
		func(vals recordstore.Values, want string) {
			_, err := recordstore.Remap(from, to, vals)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("too few values", recordstore.Values{"a", int64(1)}, "2 values for 3 columns"),
		Entry("an int where a string is stored", recordstore.Values{int64(1), int64(1), int64(1)}, "column id"),
		Entry("a float in an integer column", recordstore.Values{"a", 1.5, int64(1)}, "column n"),
		Entry("a bool that is not 0 or 1", recordstore.Values{"a", int64(1), int64(2)}, "column ok"),
		Entry("a Go bool instead of 0/1", recordstore.Values{"a", int64(1), true}, "column ok"),
		Entry("a null key column", recordstore.Values{nil, int64(1), int64(1)}, "column id is required"),
	)
})
