package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// keyedKind is a kind with an integer key and a text column.
func keyedKind() *recordstore.Kind {
	k := &recordstore.Kind{Name: "jobs", Key: []string{"id"}, Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeInteger, Required: true},
		{Name: "state", Type: recordstore.TypeString},
	}}
	Expect(k.Validate()).To(Succeed())
	return k
}

// brokenReader fails every read; reaching it means the input was read
// past the point where it should have stopped.
type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errors.New("read past the bad line") }

var _ = Describe("readRows", func() {
	// collect reads in with readRows and returns the kept values.
	collect := func(in string, maxRows int64) ([]recordstore.Values, error) {
		var got []recordstore.Values
		_, err := readRows(newRowReader(strings.NewReader(in), "in.ndjson"), keyedKind(), spool.Limits{MaxRows: maxRows},
			func(v recordstore.Values) error { got = append(got, v); return nil })
		return got, err
	}

	It("hands over every row with its normalized values", func() {
		got, err := collect(`{"id": 9223372036854775807, "state": "a"}`+"\n\n"+`{"id": 2}`, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]recordstore.Values{{int64(9223372036854775807), "a"}, {int64(2), nil}}))
	})

	DescribeTable("refuses, naming the input line",
		func(in string, maxRows int64, sentinel error, says ...string) {
			_, err := collect(in, maxRows)
			Expect(errors.Is(err, sentinel)).To(BeTrue(), "got %v", err)
			for _, part := range says {
				Expect(err.Error()).To(ContainSubstring(part))
			}
		},
		Entry("a row that does not fit", `{"id": 1}`+"\n"+`{"id": "x"}`, int64(0), recordstore.ErrInvalid, "in.ndjson line 2: "),
		Entry("an unknown column", "\n"+`{"id": 1, "colour": 2}`, int64(0), recordstore.ErrInvalid, "in.ndjson line 2: "),
		Entry("more rows than the cap", `{"id": 1}`+"\n"+`{"id": 2}`+"\n\n"+`{"id": 3}`, int64(2), recordstore.ErrCapacity, "in.ndjson line 4: ", "more than 2 rows in one append"),
		Entry("empty input", "\n\n", int64(0), recordstore.ErrInvalid, "in.ndjson: no rows"),
	)

	It("refuses the row that takes the rows past the byte limit as NDJSON lines, naming its line", func() {
		// {"id":1,"state":"ab"}\n is 22 bytes: two such lines fit 44 bytes, not 43.
		in := `{"id": 1, "state": "ab"}` + "\n" + `{"id": 2, "state": "ab"}` + "\n"
		var got []recordstore.Values
		keep := func(v recordstore.Values) error { got = append(got, v); return nil }
		meter, err := readRows(newRowReader(strings.NewReader(in), "in.ndjson"), keyedKind(), spool.Limits{MaxBytes: 44}, keep)
		Expect(err).NotTo(HaveOccurred())
		Expect(meter.Bytes()).To(Equal(int64(44)))
		got = nil
		_, err = readRows(newRowReader(strings.NewReader(in), "in.ndjson"), keyedKind(), spool.Limits{MaxBytes: 43}, keep)
		Expect(errors.Is(err, spool.ErrTooLarge)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("in.ndjson line 2: "))
		Expect(got).To(HaveLen(1))
	})

	It("hands over a key given twice: the library refuses it when the rows are written", func() {
		got, err := collect(`{"id": 1}`+"\n"+`{"id": 1}`, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(2))
	})

	It("stops at the first bad line without reading further", func() {
		in := io.MultiReader(strings.NewReader(`{"id": 1}`+"\n"+`{"id": "x"}`+"\n"), brokenReader{})
		_, err := readRows(newRowReader(in, "stdin"), keyedKind(), spool.Limits{}, func(recordstore.Values) error { return nil })
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("stdin line 2: "))
	})
})
