package spool_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("Inline batches", func() {
	ctx := context.Background()
	lim := spool.Limits{MaxRows: 10_000, MaxBytes: 64 << 20}

	It("round-trip a batch: header, schemas, entries and every row, as a folder would carry them", func() {
		b := sampleBatch(spool.NewIdentity("test"), normalizeAll(allTypes(), edgeRows()))
		data, err := spool.EncodeInline(ctx, b, lim)
		Expect(err).NotTo(HaveOccurred())
		got, err := spool.DecodeInline(ctx, data, lim)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.ID).To(Equal(b.ID))
		Expect(got.Producer).To(Equal(b.Producer))
		Expect(got.Created.Equal(b.Created)).To(BeTrue())
		Expect(got.Entries).To(HaveLen(3))
		Expect(got.Entries[0].Rows).To(Equal(b.Entries[0].Rows))
		Expect(got.Entries[1].Rows).To(BeEmpty())
		Expect(got.Entries[2].Op).To(Equal(recordstore.OpSeal))

		dir := newDir(spool.Options{})
		name, err := dir.Publish(ctx, b, spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		f, err := dir.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		fromFolder, err := f.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries).To(HaveLen(len(fromFolder.Entries)))
		for i, e := range fromFolder.Entries {
			rows := e.Rows
			e.Rows, got.Entries[i].Rows = nil, rows[:0:0] // compared below; a zero-row entry is empty either way
			if len(rows) > 0 {
				Expect(b.Entries[i].Rows).To(Equal(rows))
			}
			Expect(got.Entries[i].Op).To(Equal(e.Op))
			Expect(got.Entries[i].Stream).To(Equal(e.Stream))
			Expect(got.Entries[i].Kind).To(Equal(e.Kind))
		}
	})

	It("refuses a batch whose encoding exceeds MaxInlineBytes", func() {
		rows := make([]recordstore.Values, 0, 5000)
		for i := range 5000 {
			rows = append(rows, recordstore.Values{string(bytes.Repeat([]byte("x"), 100)), int64(i), nil, nil, nil, nil})
		}
		b := sampleBatch(spool.NewIdentity("test"), rows)
		_, err := spool.EncodeInline(ctx, b, lim)
		Expect(errors.Is(err, spool.ErrInlineTooLarge)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, recordstore.ErrCapacity)).To(BeTrue())
	})

	It("refuses what Publish refuses before encoding: a repeated key", func() {
		b := &recordstore.Batch{ID: spool.NewID(), Producer: recordstore.Producer{Instance: "0123456789abcdef", Seq: 1}, Created: time.Now().UTC(),
			Schemas: []recordstore.Kind{*keyed()},
			Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: "kv",
				Rows: []recordstore.Values{{"a", int64(1)}, {"a", int64(2)}}}}}
		_, err := spool.EncodeInline(ctx, b, lim)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
	})

	It("refuses a damaged inline batch with the spool's sentinels", func() {
		b := sampleBatch(spool.NewIdentity("test"), normalizeAll(allTypes(), edgeRows()))
		data, err := spool.EncodeInline(ctx, b, lim)
		Expect(err).NotTo(HaveOccurred())

		flipped := bytes.Clone(data)
		flipped[len(flipped)-3] ^= 0x20
		_, err = spool.DecodeInline(ctx, flipped, lim)
		Expect(errors.Is(err, spool.ErrChecksum)).To(BeTrue(), "%v", err)

		_, err = spool.DecodeInline(ctx, data[:len(data)-1], lim)
		Expect(errors.Is(err, spool.ErrChecksum)).To(BeTrue(), "%v", err)

		_, err = spool.DecodeInline(ctx, append(bytes.Clone(data), '\n'), lim)
		Expect(errors.Is(err, spool.ErrBadManifest)).To(BeTrue(), "%v", err)

		_, err = spool.DecodeInline(ctx, data[1:], lim)
		Expect(errors.Is(err, spool.ErrBadManifest)).To(BeTrue(), "%v", err)

		_, err = spool.DecodeInline(ctx, data, spool.Limits{MaxRows: 2})
		Expect(errors.Is(err, spool.ErrTooManyRows)).To(BeTrue(), "%v", err)
	})
})

// FuzzInlineDecode decodes arbitrary inline batches: every input fails
// cleanly (ErrInvalid or ErrCapacity) or decodes to a batch that encodes
// and decodes again to the same batch.
func FuzzInlineDecode(f *testing.F) {
	ctx := context.Background()
	lim := spool.Limits{MaxRows: 1000, MaxBytes: 1 << 20}
	b := sampleBatch(spool.NewIdentity("fuzz"), normalizeAll(allTypes(), edgeRows()))
	if data, err := spool.EncodeInline(ctx, b, lim); err == nil {
		f.Add(data)
	}
	f.Add([]byte("RSIB1\n\x02{}"))
	f.Add([]byte("RSIB1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := spool.DecodeInline(ctx, data, lim)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) && !errors.Is(err, recordstore.ErrCapacity) {
				t.Fatalf("error %v wraps neither ErrInvalid nor ErrCapacity", err)
			}
			return
		}
		again, err := spool.EncodeInline(ctx, got, lim)
		if err != nil {
			return // a valid inline batch a writer would not make (e.g. a row the writer refuses)
		}
		back, err := spool.DecodeInline(ctx, again, lim)
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if len(back.Entries) != len(got.Entries) {
			t.Fatalf("round trip changed the entries: %d, then %d", len(got.Entries), len(back.Entries))
		}
		for i := range got.Entries {
			if len(back.Entries[i].Rows) != len(got.Entries[i].Rows) {
				t.Fatalf("entry %d: %d rows, then %d", i, len(got.Entries[i].Rows), len(back.Entries[i].Rows))
			}
		}
	})
}
