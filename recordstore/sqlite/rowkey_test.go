// Specs for key identity on the direct append path: keys repeated in one
// append, as the kind table's key index compares them.

package sqlite_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// numberKeyed is a kind keyed by a number column.
func numberKeyed() recordstore.Kind {
	return recordstore.Kind{Name: "nk", Key: []string{"x"}, Columns: []recordstore.Column{
		{Name: "x", Type: recordstore.TypeNumber},
		{Name: "v", Type: recordstore.TypeString},
	}}
}

var _ = Describe("Append's key identity", func() {
	It("refuses keys 0 and -0 in one append, as the key index holds them equal, and stores nothing", func() {
		b := openStore(newClock())
		declare(b, numberKeyed())
		_, err := b.Append(context.Background(), "s", "nk", []recordstore.Row{{"x": 0.0, "v": "a"}, {"x": math.Copysign(0, -1), "v": "b"}})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err).To(MatchError(ContainSubstring("rows 1 and 2 have the same key")))
		_, err = b.Scan(context.Background(), "s", recordstore.ScanOptions{})
		Expect(err).To(MatchError(recordstore.ErrNotFound), "the stream was not created")
	})

	It("refuses keys 0 and -0 among enough rows to be normalized in the background", func() {
		b := openStore(newClock())
		declare(b, numberKeyed())
		rows := make([]recordstore.Row, 1000)
		for i := range rows {
			rows[i] = recordstore.Row{"x": float64(i + 1)}
		}
		rows[10] = recordstore.Row{"x": 0.0}
		rows[900] = recordstore.Row{"x": math.Copysign(0, -1)}
		_, err := b.Append(context.Background(), "s", "nk", rows)
		Expect(err).To(MatchError(ContainSubstring("rows 11 and 901 have the same key")))
	})
})
