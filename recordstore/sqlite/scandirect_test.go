// Specs for a large Scan, which reads its rows through the driver
// directly (directScanMin rows or more expected) where a small one reads
// them through database/sql: both must return the same records.

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

var _ = Describe("A large Scan", func() {
	var b *sqlite.Backend

	BeforeEach(func() {
		b = openStore(newClock())
		declare(b, eventsKind())
		rows := make([]recordstore.Row, 3000)
		for i := range rows {
			rows[i] = recordstore.Row{"name": fmt.Sprintf("r%d", i), "n": int64(i), "x": float64(i) / 4,
				"ok": i%2 == 0, "at": "2030-01-02T03:04:05.000006Z", "doc": `{"i":` + fmt.Sprint(i) + `}`}
		}
		rows[5]["name"], rows[2999]["doc"], rows[1000] = nil, nil, recordstore.Row{}
		mustAppend(b, "big", "events", rows...)
		// The same rows, ten at a time, in a stream too small for the
		// direct path.
		for i := 0; i < len(rows); i += 10 {
			mustAppend(b, fmt.Sprintf("small%d", i/10), "events", rows[i:i+10]...)
		}
	})

	scan := func(stream string, opts recordstore.ScanOptions) []recordstore.Record {
		recs, err := b.Scan(ctx, stream, opts)
		Expect(err).NotTo(HaveOccurred())
		return recs
	}

	It("returns what small scans of the same rows return, nulls included", func() {
		all := scan("big", recordstore.ScanOptions{})
		Expect(all).To(HaveLen(3000))
		for i := 0; i < 300; i++ {
			small := scan(fmt.Sprintf("small%d", i), recordstore.ScanOptions{})
			for j, r := range small {
				want := all[i*10+j]
				Expect(r.Seq + int64(i*10)).To(Equal(want.Seq))
				Expect(r.Values).To(Equal(want.Values), "row %d", i*10+j)
			}
		}
		Expect(all[5].Values["name"]).To(BeNil())
		Expect(all[1000].Values).To(HaveKeyWithValue("n", BeNil()))
	})

	It("keeps After and Limit, and matches a small Limit's rows", func() {
		page := scan("big", recordstore.ScanOptions{After: 100, Limit: 600})
		Expect(seqs(page)).To(HaveLen(600))
		Expect(page[0].Seq).To(BeEquivalentTo(101))
		Expect(page[599].Seq).To(BeEquivalentTo(700))
		Expect(scan("big", recordstore.ScanOptions{After: 100, Limit: 10})).To(Equal(page[:10]))
		tail := scan("big", recordstore.ScanOptions{After: 2990})
		Expect(seqs(tail)).To(Equal([]int64{2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999, 3000}))
		Expect(tail[9].Values["doc"]).To(BeNil())
	})

	It("stops at a canceled context", func() {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_, err := b.Scan(c, "big", recordstore.ScanOptions{})
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})
})
