// Publishing an append whose rows stream from a Source: the same batch,
// byte for byte, as with the rows held, and the same refusals, with
// nothing left behind.

package spool_test

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
)

var _ = Describe("publishing an append whose rows stream from a Source", func() {
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

	// manyRows is n rows of allTypes, every one different, past several
	// of the chunks a streamed entry is encoded in.
	manyRows := func(n int) []recordstore.Values {
		edge := normalizeAll(allTypes(), edgeRows())
		out := make([]recordstore.Values, n)
		for i := range out {
			v := append(recordstore.Values(nil), edge[i%len(edge)]...)
			v[1] = int64(i)
			out[i] = v
		}
		return out
	}

	// streamed is batch b with its first entry's rows moved to a Source.
	streamed := func(b *recordstore.Batch) (*recordstore.Batch, *sliceSource) {
		src := &sliceSource{rows: b.Entries[0].Rows}
		b.Entries[0].Rows, b.Entries[0].Source = nil, src
		return b, src
	}

	It("is never encoded inline (the fast path), whose rows must be held", func() {
		b, src := streamed(sampleBatch(id, manyRows(3)))
		_, err := spool.EncodeInline(ctx, b, spool.Limits{})
		Expect(err).To(MatchError(spool.ErrInlineTooLarge))
		Expect(src.next).To(Equal(0), "the source is left unread for the spool")
	})

	for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz, parquet.Name} {
		It("writes the data file and manifest fields the held rows give, "+format, func() {
			rows := manyRows(10_000)
			held := sampleBatch(id, rows)
			heldName, err := d.Publish(ctx, held, format)
			Expect(err).NotTo(HaveOccurred())
			b, src := streamed(sampleBatch(id, rows))
			Expect(b.Rows()).To(Equal(int64(len(rows))), "a Source counts the rows it announces")
			name, err := d.Publish(ctx, b, format)
			Expect(err).NotTo(HaveOccurred())
			Expect(src.next).To(Equal(len(rows)))

			want, err := d.Load(ctx, spool.StateIncoming, heldName.String())
			Expect(err).NotTo(HaveOccurred())
			got, err := d.Load(ctx, spool.StateIncoming, name.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Verify(ctx)).To(Succeed())
			ge, we := got.Manifest.Entries[0], want.Manifest.Entries[0]
			Expect(ge.Rows).To(Equal(int64(len(rows))))
			Expect([]any{ge.File, ge.Format, ge.Rows, ge.Bytes, ge.SHA256}).To(Equal([]any{we.File, we.Format, we.Rows, we.Bytes, we.SHA256}))
			all, err := got.ReadAll(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(all.Entries[0].Rows).To(Equal(rows))
			Expect(all.Entries[2].Op).To(Equal(recordstore.OpSeal))
			expectEmpty(d, spool.StateTmp)
		})
	}

	// refused publishes b and expects err to match every matcher, and
	// nothing in incoming/ or tmp/.
	refused := func(b *recordstore.Batch, format string, matchers ...any) {
		GinkgoHelper()
		_, err := d.Publish(ctx, b, format)
		Expect(err).To(HaveOccurred())
		for _, m := range matchers {
			Expect(err).To(MatchError(m))
		}
		expectEmpty(d, spool.StateIncoming)
		expectEmpty(d, spool.StateTmp)
	}

	It("refuses a Source that yields fewer rows than it announces, once read", func() {
		b, src := streamed(sampleBatch(id, manyRows(9000)))
		src.announce = 9001
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 0: invalid: the row source ended after 9000 of the 9001 rows it announced"))
	})

	It("refuses a Source that yields more rows than it announces", func() {
		b, src := streamed(sampleBatch(id, manyRows(9000)))
		src.announce = 8999
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 0: invalid: the row source yields more than the 8999 rows it announced"))
	})

	It("fails with the Source's own error, naming its row", func() {
		b, src := streamed(sampleBatch(id, manyRows(9000)))
		broken := errors.New("disk went away")
		src.failAt, src.err = 5000, broken
		refused(b, spool.FormatNDJSONGz, broken, ContainSubstring("entry 0: row 5001: disk went away"))
	})

	It("refuses a row of another width and a null required column, naming the row past the first chunk", func() {
		rows := manyRows(9000)
		rows[6000] = rows[6000][:3]
		b, _ := streamed(sampleBatch(id, rows))
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 0: row 6001: invalid: kind all: 3 values for 6 columns"))

		k := &recordstore.Kind{Name: "req", Columns: []recordstore.Column{{Name: "a", Type: recordstore.TypeInteger, Required: true}}}
		Expect(k.Validate()).To(Succeed())
		vals := make([]recordstore.Values, 5000)
		for i := range vals {
			vals[i] = recordstore.Values{int64(i)}
		}
		vals[4500] = recordstore.Values{nil}
		b = keyedBatch(id, k, vals)
		b, _ = streamed(b)
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 0: row 4501: "))
	})

	It("refuses two rows with the same key in different chunks", func() {
		k := &recordstore.Kind{Name: "keyed", Columns: []recordstore.Column{{Name: "k", Type: recordstore.TypeString}}, Key: []string{"k"}}
		Expect(k.Validate()).To(Succeed())
		vals := make([]recordstore.Values, 9000)
		for i := range vals {
			vals[i] = recordstore.Values{fmt.Sprintf("key-%d", i)}
		}
		vals[8000] = recordstore.Values{"key-10"}
		b, _ := streamed(keyedBatch(id, k, vals))
		refused(b, parquet.Name, recordstore.ErrInvalid, ContainSubstring("entry 0: invalid: kind keyed: rows 11 and 8001 have the same key"))
	})

	It("refuses more rows than the limit before reading any, and rows past the byte limit as they are written", func() {
		d = newDir(spool.Options{Limits: spool.Limits{MaxRows: 5000, MaxBytes: 100_000}})
		b, src := streamed(sampleBatch(id, manyRows(5001)))
		refused(b, spool.FormatNDJSON, spool.ErrTooManyRows)
		Expect(src.next).To(BeZero())

		for _, format := range []string{spool.FormatNDJSON, parquet.Name} {
			b, _ = streamed(sampleBatch(id, manyRows(5000)))
			refused(b, format, spool.ErrTooLarge)
		}
	})

	It("refuses an entry with both rows and a Source, and a non-append entry with a Source, reading neither", func() {
		b := sampleBatch(id, manyRows(10))
		src := &sliceSource{rows: manyRows(10)}
		b.Entries[0].Source = src
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 0 (append) has both rows and a row source"))
		b = sampleBatch(id, nil)
		b.Entries[2].Source = src
		refused(b, spool.FormatNDJSON, recordstore.ErrInvalid, ContainSubstring("entry 2 (seal) carries rows"))
		Expect(src.next).To(BeZero())
	})
})

// keyedBatch is a batch of one append of vals, of kind k, to s1.
func keyedBatch(id *spool.Identity, k *recordstore.Kind, vals []recordstore.Values) *recordstore.Batch {
	b := sampleBatch(id, vals)
	b.Schemas = []recordstore.Kind{*k}
	b.Entries = b.Entries[:1]
	b.Entries[0].Kind = k.Name
	return b
}
