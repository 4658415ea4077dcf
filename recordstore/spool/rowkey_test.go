// Specs for key identity on the spool paths: Publish in each format and
// the bulk Writer hold keys equal exactly when the owner's SQLite does.

package spool_test

import (
	"context"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // registers the parquet codec
)

// numberKeyed is a kind keyed by a number column.
func numberKeyed() *recordstore.Kind {
	k := &recordstore.Kind{Name: "nk", Key: []string{"x"}, Columns: []recordstore.Column{
		{Name: "x", Type: recordstore.TypeNumber},
		{Name: "v", Type: recordstore.TypeString},
	}}
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

// publishFormats are the formats Publish writes.
var publishFormats = []string{spool.FormatNDJSON, spool.FormatNDJSONGz, "parquet"}

// oneEntry is a delivery of one append entry of kind k.
func oneEntry(id *spool.Identity, k *recordstore.Kind, vals []recordstore.Values) *recordstore.Batch {
	return &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now(),
		Schemas: []recordstore.Kind{*k},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: k.Name, Rows: vals}}}
}

var _ = Describe("key identity on the spool paths", func() {
	var (
		ctx context.Context
		d   *spool.Dir
		id  *spool.Identity
	)
	BeforeEach(func() {
		ctx = context.Background()
		d = newDir(spool.Options{})
		id = spool.NewIdentity("test-build")
	})

	for _, format := range publishFormats {
		It("Publish refuses keys 0 and -0 in one "+format+" entry before writing anything, as SQLite holds them equal", func() {
			k := numberKeyed()
			vals := normalizeAll(k, []recordstore.Row{{"x": 0.0, "v": "a"}, {"x": math.Copysign(0, -1), "v": "b"}})
			_, err := d.Publish(ctx, oneEntry(id, k, vals), format)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("rows 1 and 2 have the same key")))
			expectEmpty(d, spool.StateIncoming)
			expectEmpty(d, spool.StateTmp)
		})
	}

	It("the Writer refuses keys 0 and -0 in one Append", func() {
		w := spool.NewWriter(&recordingSink{}, spool.WriterOptions{Identity: id})
		err := w.Append(ctx, "s", numberKeyed(), []recordstore.Row{{"x": 0}, {"x": math.Copysign(0, -1)}})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err).To(MatchError(ContainSubstring("same key")))
		rows, entries := w.Pending()
		Expect(rows + int64(entries)).To(BeZero())
	})

	It("the Writer keeps Appends of keys 0 and -0 in separate entries, so that no entry holds both", func() {
		sink := &recordingSink{}
		w := spool.NewWriter(sink, spool.WriterOptions{Identity: id})
		Expect(w.Append(ctx, "s", numberKeyed(), []recordstore.Row{{"x": 0}})).To(Succeed())
		Expect(w.Append(ctx, "s", numberKeyed(), []recordstore.Row{{"x": math.Copysign(0, -1)}})).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.delivered).To(HaveLen(1))
		Expect(sink.delivered[0].Entries).To(HaveLen(2))
	})
})
