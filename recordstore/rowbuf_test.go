// RowBuffer: rows of stored values held as bytes come back as they went in.

package recordstore_test

import (
	"errors"
	"io"
	"math"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("RowBuffer", func() {
	// readAll reads every row of src, then checks that it ends.
	readAll := func(src recordstore.RowSource) []recordstore.Values {
		var got []recordstore.Values
		for range src.Len() {
			v, err := src.Next()
			Expect(err).NotTo(HaveOccurred())
			got = append(got, v)
		}
		_, err := src.Next()
		Expect(err).To(Equal(io.EOF))
		return got
	}
	long := strings.Repeat("long text ", 100)

	It("gives back every row as it was added, in order, from every source", func() {
		rows := []recordstore.Values{
			{nil, int64(0), 0.0, "", long},
			{"short", int64(math.MinInt64), math.Inf(-1), "é\x00", nil},
			{"x", int64(math.MaxInt64), math.Copysign(0, -1), long + "!", "y"},
			{nil, int64(-1), math.SmallestNonzeroFloat64, nil, nil},
		}
		var b recordstore.RowBuffer
		for _, r := range rows {
			Expect(b.Add(r)).To(Succeed())
		}
		Expect(b.Len()).To(Equal(len(rows)))
		Expect(readAll(b.Source())).To(Equal(rows))
		Expect(readAll(b.Source())).To(Equal(rows), "a second source reads the same rows")
		Expect(math.Signbit(readAll(b.Source())[2][2].(float64))).To(BeTrue(), "-0 stays -0")
	})

	It("holds small integers in a few bytes each", func() {
		var b recordstore.RowBuffer
		for i := range 1000 {
			Expect(b.Add(recordstore.Values{int64(i)})).To(Succeed())
		}
		Expect(b.Size()).To(BeNumerically("<=", 3*1000))
	})

	DescribeTable("refuses a row it cannot hold and stays as it was",
		func(bad recordstore.Values) {
			var b recordstore.RowBuffer
			Expect(b.Add(recordstore.Values{"a", int64(1)})).To(Succeed())
			size := b.Size()
			err := b.Add(bad)
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "got %v", err)
			Expect(b.Len()).To(Equal(1))
			Expect(b.Size()).To(Equal(size))
			Expect(readAll(b.Source())).To(Equal([]recordstore.Values{{"a", int64(1)}}))
		},
		Entry("a value that is not a stored value", recordstore.Values{long, true}),
		Entry("a row of another width", recordstore.Values{"a"}),
	)

	It("yields nothing when empty", func() {
		var b recordstore.RowBuffer
		Expect(readAll(b.Source())).To(BeEmpty())
	})
})

var _ = Describe("ValueRows", func() {
	It("yields its rows in order, then io.EOF, from the first again on each Source", func() {
		rows := recordstore.ValueRows{{int64(1), "a"}, {nil, 2.5}}
		Expect(rows.Len()).To(Equal(2))
		for range 2 {
			src := rows.Source()
			Expect(src.Len()).To(Equal(2))
			v, err := src.Next()
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(recordstore.Values{int64(1), "a"}))
			v, err = src.Next()
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(recordstore.Values{nil, 2.5}))
			_, err = src.Next()
			Expect(err).To(MatchError(io.EOF))
		}
	})
})
