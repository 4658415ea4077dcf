// Meter: the limits of one append counted as its rows come, the bytes
// being exactly those of the NDJSON lines a publish writes.

package spool_test

import (
	"context"
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("Meter", func() {
	kind := &recordstore.Kind{Name: "m", Columns: []recordstore.Column{
		{Name: "s", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "f", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
	}}
	long := strings.Repeat("a\"b\\c\nd\te\x01é", 300) // past the length Meter measures in place

	It("says it counted rows only for its own kind, limits and count", func() {
		lim := spool.Limits{MaxRows: 10, MaxBytes: 1 << 20}
		m := spool.NewMeter(kind, lim)
		Expect(m.Add(recordstore.Values{"x", int64(1), nil, nil, nil, nil})).To(Succeed())
		Expect(m.Add(recordstore.Values{"y", int64(2), nil, nil, nil, nil})).To(Succeed())
		Expect(m.Counted(kind, lim, 2)).To(BeTrue())
		Expect(m.Counted(kind, lim, 3)).To(BeFalse(), "another count")
		Expect(m.Counted(kind, spool.Limits{MaxRows: 11, MaxBytes: 1 << 20}, 2)).To(BeFalse(), "other limits")
		same := *kind
		Expect(m.Counted(&same, lim, 2)).To(BeFalse(), "another *Kind, even an equal one")
		var none *spool.Meter
		Expect(none.Counted(kind, lim, 0)).To(BeFalse(), "no meter")
	})

	DescribeTable("counts exactly the bytes a publish encodes",
		func(rows ...recordstore.Values) {
			m := spool.NewMeter(kind, spool.Limits{})
			for _, r := range rows {
				Expect(m.Add(r)).To(Succeed())
			}
			codec, err := spool.Lookup(spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			var n int64
			n, _, err = spool.HashEntry(context.Background(), codec, kind, rows)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Bytes()).To(Equal(n))
			Expect(m.Rows()).To(Equal(int64(len(rows))))
		},
		Entry("nulls only", recordstore.Values{nil, nil, nil, nil, nil, nil}),
		Entry("every type", recordstore.Values{"x\"y", int64(-42), 2.5, int64(1), "2024-05-01T12:00:00.000000Z", `{"a":[1,2]}`}),
		Entry("long strings with escapes", recordstore.Values{long, nil, 1e300, int64(0), nil, `"` + strings.Repeat("q", 2000) + `"`}),
		Entry("several rows", recordstore.Values{"a", int64(1), nil, nil, nil, nil}, recordstore.Values{nil, int64(2), -0.125, nil, nil, "[]"}),
	)

	It("refuses the row past MaxRows and counts nothing of it", func() {
		m := spool.NewMeter(kind, spool.Limits{MaxRows: 1})
		row := recordstore.Values{"a", nil, nil, nil, nil, nil}
		Expect(m.Add(row)).To(Succeed())
		err := m.Add(row)
		Expect(errors.Is(err, spool.ErrTooManyRows)).To(BeTrue(), "got %v", err)
		Expect(errors.Is(err, recordstore.ErrCapacity)).To(BeTrue())
		Expect(m.Rows()).To(Equal(int64(1)))
	})

	It("refuses the row that takes the lines past MaxBytes", func() {
		row := recordstore.Values{"a", nil, nil, nil, nil, nil} // {"s":"a"}\n: 10 bytes
		m := spool.NewMeter(kind, spool.Limits{MaxBytes: 19})
		Expect(m.Add(row)).To(Succeed())
		err := m.Add(row)
		Expect(errors.Is(err, spool.ErrTooLarge)).To(BeTrue(), "got %v", err)
		Expect(m.Bytes()).To(Equal(int64(10)))
	})

	It("refuses a value of the wrong type, and a long string that is not UTF-8", func() {
		m := spool.NewMeter(kind, spool.Limits{})
		Expect(errors.Is(m.Add(recordstore.Values{int64(1), nil, nil, nil, nil, nil}), recordstore.ErrInvalid)).To(BeTrue())
		Expect(errors.Is(m.Add(recordstore.Values{strings.Repeat("\xff", 2000), nil, nil, nil, nil, nil}), recordstore.ErrInvalid)).To(BeTrue())
		Expect(m.Rows()).To(BeZero())
	})
})
