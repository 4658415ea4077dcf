// The bulk Writer: batching, caps, atomic appends, ordering and retries.

package spool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// recordingSink keeps what it is given and fails on demand.
type recordingSink struct {
	mu        sync.Mutex
	delivered []*recordstore.Batch
	attempts  []string // ids, in attempt order
	failNext  []error
}

func (s *recordingSink) Deliver(_ context.Context, d *recordstore.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts = append(s.attempts, fmt.Sprintf("%s/%d", d.ID, d.Producer.Seq))
	if len(s.failNext) > 0 {
		err := s.failNext[0]
		s.failNext = s.failNext[1:]
		return err
	}
	s.delivered = append(s.delivered, d)
	return nil
}

func rowsOf(n, from int) []recordstore.Row {
	out := make([]recordstore.Row, n)
	for i := range out {
		out[i] = recordstore.Row{"k": fmt.Sprintf("key-%d", from+i), "v": from + i}
	}
	return out
}

var _ = Describe("the Writer", func() {
	var (
		ctx  context.Context
		sink *recordingSink
		w    *spool.Writer
		id   *spool.Identity
	)
	BeforeEach(func() {
		ctx = context.Background()
		sink = &recordingSink{}
		id = spool.NewIdentity("b")
		w = spool.NewWriter(sink, spool.WriterOptions{Identity: id, MaxRows: 100})
	})

	It("refuses, buffering nothing, an append no batch within its Limits could carry, and cuts within them", func() {
		w := spool.NewWriter(sink, spool.WriterOptions{Identity: id, Limits: spool.Limits{MaxRows: 3, MaxBytes: 200}})
		Expect(w.Append(ctx, "s", keyed(), rowsOf(4, 0))).To(MatchError(spool.ErrTooManyRows))
		// A row of blob with a string of n bytes is a line of n+9 bytes.
		blob := &recordstore.Kind{Name: "blob", Columns: []recordstore.Column{{Name: "b", Type: recordstore.TypeString}}}
		Expect(w.Append(ctx, "b", blob, []recordstore.Row{{"b": strings.Repeat("x", 190)}})).To(Succeed(), "a line of 199 bytes")
		Expect(w.Append(ctx, "b", blob, []recordstore.Row{{"b": strings.Repeat("x", 192)}})).To(MatchError(spool.ErrTooLarge), "a line of 201 bytes")
		Expect(w.Append(ctx, "s", keyed(), rowsOf(2, 0))).To(Succeed())
		Expect(w.Append(ctx, "s", keyed(), rowsOf(2, 2))).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		var rows []int64
		for _, d := range sink.delivered {
			rows = append(rows, d.Rows())
		}
		Expect(rows).To(Equal([]int64{1, 2, 2}), "batches cut at three rows and 200 bytes")
	})

	It("cuts at the default caps when none are set: 50,000 rows, 64 MiB", func() {
		w := spool.NewWriter(sink, spool.WriterOptions{Identity: id})
		for i := range 51 {
			Expect(w.Append(ctx, "s", keyed(), rowsOf(1000, i*1000))).To(Succeed())
		}
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.delivered).To(HaveLen(2))
		Expect(sink.delivered[0].Rows()).To(Equal(int64(spool.DefaultMaxBatchRows)))
		Expect(sink.delivered[1].Rows()).To(Equal(int64(1000)))

		sink.delivered = nil
		blob := &recordstore.Kind{Name: "blob", Columns: []recordstore.Column{{Name: "b", Type: recordstore.TypeString}}}
		mib := strings.Repeat("x", 1<<20)
		for range 70 {
			Expect(w.Append(ctx, "big", blob, []recordstore.Row{{"b": mib}})).To(Succeed())
		}
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.delivered).To(HaveLen(2))
		first := sink.delivered[0].Rows()
		Expect(first).To(BeNumerically("<", 64), "a 1 MiB row plus its framing: fewer than 64 fit in 64 MiB")
		Expect(first).To(BeNumerically(">=", 60))
		Expect(first + sink.delivered[1].Rows()).To(Equal(int64(70)))
	})

	It("buffers until Flush and delivers one batch with every op in order", func() {
		Expect(w.Append(ctx, "s", keyed(), rowsOf(3, 0))).To(Succeed())
		Expect(w.Append(ctx, "s", keyed(), rowsOf(2, 3))).To(Succeed())
		Expect(w.Append(ctx, "other", keyed(), nil)).To(Succeed())
		Expect(w.Seal(ctx, "s")).To(Succeed())
		Expect(w.Expire(ctx, "other", time.Hour)).To(Succeed())
		Expect(w.Trim(ctx, "s", time.Unix(100, 0))).To(Succeed())
		Expect(w.Reopen(ctx, "s", 2)).To(Succeed())
		Expect(w.Delete(ctx, "other")).To(Succeed())
		Expect(sink.delivered).To(BeEmpty())
		rows, entries := w.Pending()
		Expect(rows).To(Equal(int64(5)))
		Expect(entries).To(Equal(7))

		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.delivered).To(HaveLen(1))
		d := sink.delivered[0]
		Expect(d.Producer.Instance).To(Equal(id.Instance))
		Expect(d.Producer.Seq).To(Equal(int64(1)))
		Expect(spool.ValidID(d.ID)).To(BeTrue())
		var ops []recordstore.BatchOp
		for _, e := range d.Entries {
			ops = append(ops, e.Op)
		}
		Expect(ops).To(Equal([]recordstore.BatchOp{recordstore.OpAppend, recordstore.OpAppend, recordstore.OpSeal, recordstore.OpExpire, recordstore.OpTrim, recordstore.OpReopen, recordstore.OpDelete}))
		Expect(d.Entries[0].Rows).To(HaveLen(5), "two appends of distinct keys share an entry")
		Expect(d.Entries[1].Rows).To(BeEmpty())
		Expect(d.Schemas).To(HaveLen(1))
		Expect(d.Entries[3].TTL).To(Equal(time.Hour))
		Expect(d.Entries[5].Generation).To(Equal(int64(2)))
		rows, entries = w.Pending()
		Expect(rows + int64(entries)).To(BeZero())
	})

	It("keeps appends with a key in common in separate entries", func() {
		Expect(w.Append(ctx, "s", keyed(), rowsOf(2, 0))).To(Succeed())
		Expect(w.Append(ctx, "s", keyed(), rowsOf(2, 1))).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.delivered[0].Entries).To(HaveLen(2))
	})

	It("refuses bad input and buffers nothing of it", func() {
		Expect(w.Append(ctx, "s", keyed(), []recordstore.Row{{"k": "a"}, {"k": 1}})).To(MatchError(recordstore.ErrInvalid))
		Expect(w.Append(ctx, "s", keyed(), []recordstore.Row{{"k": "a"}, {"k": "a"}})).To(MatchError(ContainSubstring("same key")))
		Expect(w.Append(ctx, "../s", keyed(), rowsOf(1, 0))).To(MatchError(recordstore.ErrInvalid))
		Expect(w.Append(ctx, "s", &recordstore.Kind{Name: "bad"}, rowsOf(1, 0))).To(MatchError(recordstore.ErrInvalid))
		Expect(w.Append(ctx, "s", keyed(), []recordstore.Row{{"k": "\xff"}})).To(MatchError(ContainSubstring("UTF-8")))
		Expect(w.Expire(ctx, "s", 0)).To(MatchError(recordstore.ErrInvalid))
		Expect(w.Reopen(ctx, "s", 0)).To(MatchError(recordstore.ErrInvalid))
		other := keyed()
		other.Columns = append(other.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeBool})
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 0))).To(Succeed())
		Expect(w.Append(ctx, "s", other, rowsOf(1, 5))).To(MatchError(recordstore.ErrSchemaConflict))
		rows, entries := w.Pending()
		Expect(rows).To(Equal(int64(1)))
		Expect(entries).To(Equal(1))
	})

	It("cuts batches at the row cap without splitting an Append", func() {
		for i := range 7 {
			Expect(w.Append(ctx, fmt.Sprintf("s%d", i), keyed(), rowsOf(30, 0))).To(Succeed())
		}
		Expect(w.Append(ctx, "big", keyed(), rowsOf(250, 0))).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		var sizes []int64
		for _, d := range sink.delivered {
			sizes = append(sizes, d.Rows())
		}
		Expect(sizes).To(Equal([]int64{90, 90, 30, 250}))
		for i, d := range sink.delivered {
			Expect(d.Producer.Seq).To(Equal(int64(i + 1)))
		}
	})

	It("cuts batches at the byte cap", func() {
		w = spool.NewWriter(sink, spool.WriterOptions{Identity: id, MaxBytes: 4096})
		for i := range 10 {
			Expect(w.Append(ctx, "s", keyed(), []recordstore.Row{{"k": fmt.Sprintf("%d-%01000d", i, 0)}})).To(Succeed())
		}
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(len(sink.delivered)).To(BeNumerically(">=", 3))
		var total int64
		for _, d := range sink.delivered {
			total += d.Rows()
			Expect(d.Rows()).To(BeNumerically("<=", 4))
		}
		Expect(total).To(Equal(int64(10)))
	})

	It("retries a failed delivery with the same id and seq before anything later", func() {
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 0))).To(Succeed())
		sink.failNext = []error{errors.New("disk full"), errors.New("still full")}
		Expect(w.Flush(ctx)).To(MatchError(ContainSubstring("disk full")))
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 1))).To(MatchError(ContainSubstring("still full")), "the queued batch is retried first, and this append is refused")
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 2))).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(sink.attempts[0]).To(Equal(sink.attempts[1]))
		Expect(sink.attempts[1]).To(Equal(sink.attempts[2]))
		Expect(sink.delivered).To(HaveLen(2))
		Expect(sink.delivered[0].Producer.Seq).To(Equal(int64(1)))
		Expect(sink.delivered[1].Producer.Seq).To(Equal(int64(2)))
		Expect(sink.delivered[1].Entries[0].Rows).To(HaveLen(1), "the refused append is not there")
	})

	It("stops for good after an fsync failure", func() {
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 0))).To(Succeed())
		sink.failNext = []error{fmt.Errorf("%w: incoming: EIO", fsutil.ErrSync)}
		Expect(w.Flush(ctx)).To(MatchError(fsutil.ErrSync))
		Expect(w.Flush(ctx)).To(MatchError(fsutil.ErrSync))
		Expect(w.Seal(ctx, "s")).To(MatchError(fsutil.ErrSync))
		Expect(sink.attempts).To(HaveLen(1))
	})

	It("refuses writes after Close", func() {
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 0))).To(Succeed())
		Expect(w.Close(ctx)).To(Succeed())
		Expect(sink.delivered).To(HaveLen(1))
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 1))).To(MatchError(recordstore.ErrClosed))
	})

	It("hands OnDeliver every delivered batch", func() {
		var seen []string
		w = spool.NewWriter(sink, spool.WriterOptions{Identity: id, OnDeliver: func(d *recordstore.Batch) { seen = append(seen, d.ID) }})
		Expect(w.Append(ctx, "s", keyed(), rowsOf(1, 0))).To(Succeed())
		Expect(w.Flush(ctx)).To(Succeed())
		Expect(seen).To(Equal([]string{sink.delivered[0].ID}))
	})

	It("publishes into the spool by default, loadable and identical to the rows", func() {
		d := newDir(spool.Options{})
		pw, err := d.NewWriter(spool.FormatNDJSONGz, spool.WriterOptions{Identity: id})
		Expect(err).NotTo(HaveOccurred())
		kind := allTypes()
		Expect(pw.Append(ctx, "s", kind, edgeRows())).To(Succeed())
		Expect(pw.Seal(ctx, "s")).To(Succeed())
		Expect(pw.Close(ctx)).To(Succeed())
		list, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(HaveLen(1))
		b, err := d.Load(ctx, spool.StateIncoming, list[0].String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries[0].Rows).To(Equal(normalizeAll(kind, edgeRows())))
		Expect(got.Entries[1].Op).To(Equal(recordstore.OpSeal))

		_, err = d.NewWriter("csv", spool.WriterOptions{})
		Expect(err).To(MatchError(spool.ErrUnknownCodec))
	})

	It("is safe for concurrent appends", func() {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				for i := range 50 {
					Expect(w.Append(ctx, fmt.Sprintf("g%d", g), keyed(), rowsOf(3, i*3))).To(Succeed())
				}
			}()
		}
		wg.Wait()
		Expect(w.Flush(ctx)).To(Succeed())
		var total int64
		for _, d := range sink.delivered {
			total += d.Rows()
		}
		Expect(total).To(Equal(int64(600)))
	})
})

var _ = Describe("Remap", func() {
	It("moves values into the stored column order and checks types", func() {
		from := keyed()
		to := &recordstore.Kind{Name: "kv", Key: []string{"k"}, Columns: []recordstore.Column{
			{Name: "extra", Type: recordstore.TypeBool}, {Name: "v", Type: recordstore.TypeInteger}, {Name: "k", Type: recordstore.TypeString}}}
		got, err := spool.Remap(from, to, recordstore.Values{"a", int64(1)})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(recordstore.Values{nil, int64(1), "a"}))

		to.Columns[1].Type = recordstore.TypeString
		_, err = spool.Remap(from, to, recordstore.Values{"a", int64(1)})
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		_, err = spool.Remap(from, keyed(), recordstore.Values{"a"})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("is Normalize's partner: Normalize equals Kind.Normalize", func() {
		k := allTypes()
		for _, r := range edgeRows() {
			a, err1 := spool.Normalize(k, r)
			b, err2 := k.Normalize(r)
			Expect(err1).To(BeNil())
			Expect(err2).To(BeNil())
			Expect(a).To(Equal(b))
		}
	})
})
