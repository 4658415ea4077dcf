// Specs for StreamRows: the rows and Meta of QueryRows, handed over one
// at a time in column order, on the direct driver path and on the
// database/sql one.

package sqlite_test

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("StreamRows", func() {
	var b *sqlite.Backend

	BeforeEach(func() {
		b = openStore(newClock())
		declare(b, eventsKind())
		rows := make([]recordstore.Row, 2000)
		for i := range rows {
			rows[i] = recordstore.Row{"name": fmt.Sprintf("r%d", i%37), "n": int64(i % 50), "x": float64(i) / 8,
				"ok": i%2 == 0, "at": "2030-01-02T03:04:05.000006Z", "doc": `{"i":` + fmt.Sprint(i) + `}`}
			if i%13 == 0 {
				rows[i] = recordstore.Row{}
			}
		}
		mustAppend(b, "s", "events", rows...)
	})

	// stream returns what StreamRows hands over, as records, and the Meta
	// start saw.
	stream := func(q recordstore.RowQuery) ([]recordstore.Record, recordstore.Meta) {
		var (
			recs []recordstore.Record
			meta recordstore.Meta
			cols []recordstore.Column
		)
		err := b.StreamRows(ctx, "s", q, func(m recordstore.Meta, k *recordstore.Kind) error {
			meta, cols = m, k.Columns
			return nil
		}, func(seq int64, vals []any) error {
			Expect(vals).To(HaveLen(len(cols)))
			row := recordstore.Row{}
			for i, c := range cols {
				row[c.Name] = vals[i]
			}
			recs = append(recs, recordstore.Record{Seq: seq, Values: row})
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		return recs, meta
	}

	It("hands over the rows and the Meta QueryRows returns, for every kind of query", func() {
		queries := []recordstore.RowQuery{
			{},
			{After: 100, Limit: 600},
			{After: 10, To: 20},
			{Limit: 1},
			{Sort: "x", Desc: true, Limit: 700},
			{Sort: "name", HasCursor: true, CursorSeq: 40, CursorValue: "r3"},
			{Text: "R1", Search: []string{"name"}},
			{Where: []recordstore.Condition{{Column: "n", Op: recordstore.OpGe, Value: int64(40)}}},
			// A value the driver does not take as it is: read through
			// database/sql, which converts it.
			{Where: []recordstore.Condition{{Column: "n", Op: recordstore.OpLt, Value: 3}}},
		}
		for _, q := range queries {
			want, wantMeta, err := b.QueryRows(ctx, "s", q)
			Expect(err).NotTo(HaveOccurred())
			got, meta := stream(q)
			Expect(meta).To(Equal(wantMeta))
			Expect(got).To(HaveLen(len(want)), "%+v", q)
			for i := range want {
				Expect(got[i]).To(Equal(want[i]), "%+v row %d", q, i)
			}
		}
	})

	It("returns start's error as it is, before any row", func() {
		stop := errors.New("stop")
		rows := 0
		err := b.StreamRows(ctx, "s", recordstore.RowQuery{}, func(recordstore.Meta, *recordstore.Kind) error { return stop },
			func(int64, []any) error { rows++; return nil })
		Expect(err).To(BeIdenticalTo(stop))
		Expect(rows).To(BeZero())
	})

	It("stops at row's first error and returns it as it is", func() {
		stop := errors.New("stop")
		for _, at := range []int{5, 1500} { // in the first chunk, and on the second goroutine
			rows := 0
			err := b.StreamRows(ctx, "s", recordstore.RowQuery{}, func(recordstore.Meta, *recordstore.Kind) error { return nil },
				func(int64, []any) error {
					if rows++; rows == at {
						return stop
					}
					return nil
				})
			Expect(err).To(BeIdenticalTo(stop))
			Expect(rows).To(Equal(at))
		}
	})

	It("refuses a missing stream and bad bounds, and stops at a canceled context", func() {
		none := func(recordstore.Meta, *recordstore.Kind) error { return nil }
		each := func(int64, []any) error { return nil }
		err := b.StreamRows(ctx, "nope", recordstore.RowQuery{}, none, each)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		err = b.StreamRows(ctx, "s", recordstore.RowQuery{After: -1}, none, each)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		c, cancel := context.WithCancel(ctx)
		cancel()
		err = b.StreamRows(c, "s", recordstore.RowQuery{}, none, each)
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})
})
