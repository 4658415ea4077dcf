// RowSpill: rows of stored values written to a scratch file come back as
// they went in, and the file is gone once the spill is closed.

package recordstore_test

import (
	"errors"
	"io"
	"math"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("RowSpill", func() {
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
	long := strings.Repeat("long text ", 10_000) // a row longer than the read buffer

	newSpill := func() (*recordstore.RowSpill, string) {
		dir := GinkgoT().TempDir()
		s, err := recordstore.NewRowSpill(dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		return s, dir
	}

	It("gives back every row as it was added, in order, from every source", func() {
		rows := []recordstore.Values{
			{nil, int64(0), 0.0, "", long},
			{"short", int64(math.MinInt64), math.Inf(-1), "é\x00", nil},
			{"x", int64(math.MaxInt64), math.Copysign(0, -1), long + "!", "y"},
			{nil, int64(-1), math.SmallestNonzeroFloat64, nil, nil},
		}
		s, _ := newSpill()
		for _, r := range rows[:2] {
			Expect(s.Add(r)).To(Succeed())
		}
		Expect(readAll(s.Source())).To(Equal(rows[:2]), "a source sees the rows added so far")
		for _, r := range rows[2:] {
			Expect(s.Add(r)).To(Succeed())
		}
		Expect(s.Len()).To(Equal(len(rows)))
		Expect(readAll(s.Source())).To(Equal(rows))
		Expect(readAll(s.Source())).To(Equal(rows), "a second source reads the same rows")
		Expect(math.Signbit(readAll(s.Source())[2][2].(float64))).To(BeTrue(), "-0 stays -0")
	})

	It("keeps its rows in the file, not in memory, and leaves no file behind", func() {
		s, dir := newSpill()
		for i := range 100_000 {
			Expect(s.Add(recordstore.Values{int64(i), "user-1"})).To(Succeed())
		}
		Expect(s.Size()).To(BeNumerically(">", 100_000*8))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty(), "the file is unlinked at once")
		got := readAll(s.Source())
		Expect(got).To(HaveLen(100_000))
		Expect(got[99_999]).To(Equal(recordstore.Values{int64(99_999), "user-1"}))
		Expect(s.Close()).To(Succeed())
		entries, err = os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())
	})

	DescribeTable("refuses a row it cannot hold and stays as it was",
		func(bad recordstore.Values) {
			s, _ := newSpill()
			Expect(s.Add(recordstore.Values{"a", int64(1)})).To(Succeed())
			size := s.Size()
			err := s.Add(bad)
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "got %v", err)
			Expect(s.Len()).To(Equal(1))
			Expect(s.Size()).To(Equal(size))
			Expect(readAll(s.Source())).To(Equal([]recordstore.Values{{"a", int64(1)}}))
		},
		Entry("a value that is not a stored value", recordstore.Values{"b", true}),
		Entry("a row of another width", recordstore.Values{"a"}),
	)

	It("yields nothing when empty", func() {
		s, _ := newSpill()
		Expect(readAll(s.Source())).To(BeEmpty())
	})

	It("fails to open in a folder that does not exist, leaving nothing", func() {
		_, err := recordstore.NewRowSpill(GinkgoT().TempDir() + "/missing")
		Expect(err).To(HaveOccurred())
	})
})
