// Publishing, listing and loading batches.

package spool_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("publishing and loading", func() {
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

	It("creates the four folders beside the store with mode 0700", func() {
		Expect(d.Root()).To(HaveSuffix("records.sqlite.spool"))
		for _, s := range []spool.State{spool.StateTmp, spool.StateIncoming, spool.StateFailed, spool.StateTrash} {
			fi, err := os.Stat(d.Path(s, ""))
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)), string(s))
		}
	})

	for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz} {
		It("round trips every column type through a published "+format+" batch", func() {
			kind := allTypes()
			want := normalizeAll(kind, edgeRows())
			del := sampleBatch(id, want)
			name, err := d.Publish(ctx, del, format)
			Expect(err).NotTo(HaveOccurred())
			Expect(name.ID).To(Equal(del.ID))

			b, err := d.Load(ctx, spool.StateIncoming, name.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(b.Manifest.Producer).To(Equal(recordstore.Producer{Instance: id.Instance, Seq: 1, PID: os.Getpid(), Host: id.Host, Build: "test-build"}))
			e := b.Manifest.Entries[0]
			Expect(e.Format).To(Equal(format))
			Expect(e.Rows).To(Equal(int64(len(want))))
			Expect(e.File).To(HaveSuffix("." + format))
			Expect(b.Manifest.Entries[1].File).To(BeEmpty(), "a zero-row append has no data file")
			Expect(b.Verify(ctx)).To(Succeed())

			got, err := b.ReadAll(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Entries[0].Rows).To(Equal(want))
			Expect(got.Entries[1].Rows).To(BeEmpty())
			Expect(got.Entries[2].Op).To(Equal(recordstore.OpSeal))
			Expect(got.Schemas).To(Equal([]recordstore.Kind{*kind}))
		})
	}

	It("tells PublishNotify's caller the batch's name once it is in incoming/, before returning", func() {
		var seen spool.BatchName
		var listed []spool.BatchName
		name, err := d.PublishNotify(ctx, sampleBatch(id, normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON, func(n spool.BatchName) {
			seen = n
			listed, _ = d.List(ctx, spool.StateIncoming)
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(seen).To(Equal(name))
		Expect(listed).To(Equal([]spool.BatchName{name}), "visible runs once the rename is done")
	})

	It("writes files 0600 and leaves nothing in tmp", func() {
		name, err := d.Publish(ctx, sampleBatch(id, normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		ents, err := os.ReadDir(d.Path(spool.StateIncoming, name.String()))
		Expect(err).NotTo(HaveOccurred())
		Expect(ents).To(HaveLen(2))
		for _, e := range ents {
			fi, err := e.Info()
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), e.Name())
		}
		tmp, err := os.ReadDir(d.Path(spool.StateTmp, ""))
		Expect(err).NotTo(HaveOccurred())
		Expect(tmp).To(BeEmpty())
	})

	It("lists batches oldest first, parsed, and never lists tmp", func() {
		var want []spool.BatchName
		base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 5 {
			del := sampleBatch(id, nil)
			del.Created = base.Add(time.Duration(5-i) * time.Second) // later seqs, earlier times
			name, err := d.Publish(ctx, del, spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			want = append([]spool.BatchName{name}, want...)
		}
		Expect(os.MkdirAll(d.Path(spool.StateTmp, id.Instance+"-"+spool.NewID()), 0o700)).To(Succeed())
		Expect(os.WriteFile(d.Path(spool.StateIncoming, "stray.txt"), []byte("x"), 0o600)).To(Succeed())

		got, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(got)).To(Equal(names(want)))
		Expect(got[0].Created.Equal(base.Add(time.Second))).To(BeTrue())
		Expect(got[0].Seq).To(Equal(int64(5)))
		Expect(got[0].Instance).To(Equal(id.Instance))

		strays, err := d.Strays(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(strays).To(Equal([]string{"stray.txt"}))

		_, err = d.List(ctx, spool.StateTmp)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("keeps publish order for batches of one producer", func() {
		var want []string
		for range 20 {
			name, err := d.Publish(ctx, sampleBatch(id, nil), spool.FormatNDJSON)
			Expect(err).NotTo(HaveOccurred())
			want = append(want, name.String())
		}
		got, err := d.List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(got)).To(Equal(want))
		for i, n := range got {
			Expect(n.Seq).To(Equal(int64(i + 1)))
		}
	})

	It("refuses a non-trim entry that carries a before time, writing nothing", func() {
		b := sampleBatch(id, nil)
		b.Entries[2].Before = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // the seal
		_, err := d.Publish(ctx, b, spool.FormatNDJSON)
		Expect(err).To(MatchError(spool.ErrBadManifest))
		Expect(err).To(MatchError(ContainSubstring("before is required on trim entries and allowed nowhere else")))
		expectEmpty(d, spool.StateIncoming)
		expectEmpty(d, spool.StateTmp)
	})

	It("refuses an invalid batch before writing anything", func() {
		del := sampleBatch(id, nil)
		del.Entries[0].Stream = "../escape"
		_, err := d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).To(MatchError(spool.ErrBadManifest))
		del = sampleBatch(id, []recordstore.Values{{int64(1), nil, nil, nil, nil, nil}})
		_, err = d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		_, err = d.Publish(ctx, sampleBatch(id, nil), "csv")
		Expect(err).To(MatchError(spool.ErrUnknownCodec))
		expectEmpty(d, spool.StateIncoming)
		expectEmpty(d, spool.StateTmp)
	})

	DescribeTable("refuses, before writing anything, rows an owner would refuse whole",
		func(vals []recordstore.Values, says string) {
			k := keyed()
			del := &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now(),
				Schemas: []recordstore.Kind{*k},
				Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: k.Name, Rows: vals}}}
			_, err := d.Publish(ctx, del, spool.FormatNDJSON)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(says)))
			expectEmpty(d, spool.StateIncoming)
			expectEmpty(d, spool.StateTmp)
		},
		Entry("a null key", []recordstore.Values{{"a", int64(1)}, {nil, int64(2)}}, "row 2: invalid: kind kv: column k is required"),
		Entry("a key twice in one entry", []recordstore.Values{{"a", int64(1)}, {"b", int64(2)}, {"a", int64(3)}}, "rows 1 and 3 have the same key"),
		Entry("a row short of a value", []recordstore.Values{{"a"}}, "1 values for 2 columns"),
	)

	It("publishes again with the same id after a failed attempt left a tmp folder", func() {
		del := sampleBatch(id, normalizeAll(allTypes(), edgeRows()))
		leftover := d.Path(spool.StateTmp, del.Producer.Instance+"-"+del.ID)
		Expect(os.MkdirAll(leftover, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(leftover, "manifest.json"), []byte("{torn"), 0o600)).To(Succeed())
		name, err := d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		_, err = d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		expectEmpty(d, spool.StateTmp)
	})

	It("streams rows with an iterator and stops at the first error", func() {
		rows := normalizeAll(allTypes(), edgeRows())
		name, err := d.Publish(ctx, sampleBatch(id, rows), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for v, err := range b.Rows(ctx, 0) {
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(rows[n]))
			n++
		}
		Expect(n).To(Equal(len(rows)))

		// the same rows under a smaller batch cap
		small, err := spool.LoadPath(ctx, b.Path, spool.Limits{MaxRows: 2})
		Expect(err).To(MatchError(spool.ErrTooManyRows))
		Expect(small).To(BeNil())
	})

	It("reads an entry through Open with io.EOF at the end", func() {
		rows := normalizeAll(allTypes(), edgeRows())
		name, err := d.Publish(ctx, sampleBatch(id, rows), spool.FormatNDJSONGz)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		r, err := b.Open(ctx, 0)
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		for range rows {
			_, err := r.Next()
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = r.Next()
		Expect(err).To(Equal(io.EOF))
		z, err := b.Open(ctx, 1)
		Expect(err).NotTo(HaveOccurred())
		_, err = z.Next()
		Expect(err).To(Equal(io.EOF))
	})

	It("refuses a batch whose data file grew after publishing (streaming size check)", func() {
		name, err := d.Publish(ctx, sampleBatch(id, normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		f, err := os.OpenFile(filepath.Join(b.Path, b.Manifest.Entries[0].File), os.O_APPEND|os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteString(strings.Repeat("{}\n", 100))
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())
		_, err = b.ReadAll(ctx)
		Expect(err).To(MatchError(spool.ErrChecksum))
		var ve *spool.ValidationError
		Expect(err).To(BeAssignableToTypeOf(ve))
	})
})

var _ = Describe("publishing within the limits an owner loads with", func() {
	var (
		ctx context.Context
		d   *spool.Dir
		id  *spool.Identity
	)
	BeforeEach(func() {
		ctx = context.Background()
		d = newDir(spool.Options{Limits: spool.Limits{MaxRows: 10, MaxBytes: 4096}})
		id = spool.NewIdentity("test-build")
	})

	// wide returns n rows of allTypes with a string of size bytes each.
	wide := func(n, size int) []recordstore.Values {
		rows := make([]recordstore.Row, n)
		for i := range rows {
			rows[i] = recordstore.Row{"s": strings.Repeat("x", size), "i": i}
		}
		return normalizeAll(allTypes(), rows)
	}

	DescribeTable("refuses, writing nothing, a batch the owner would refuse",
		func(rows []recordstore.Values, sentinel error, about string) {
			_, err := d.Publish(ctx, sampleBatch(id, rows), spool.FormatNDJSON)
			Expect(err).To(MatchError(sentinel))
			Expect(errors.Is(err, recordstore.ErrCapacity)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(about))
			expectEmpty(d, spool.StateIncoming)
			expectEmpty(d, spool.StateTmp)
		},
		Entry("more rows than MaxRows", wide(11, 1), spool.ErrTooManyRows, "11 rows, the limit is 10"),
		Entry("an entry larger than MaxBytes", wide(2, 3000), spool.ErrTooLarge, "4096 bytes"),
	)

	DescribeTable("counts an NDJSON entry's bytes exactly: MaxBytes passes, one more does not",
		func(format string) {
			// Newlines double in size when encoded, so the values are
			// half the size of their line: only an exact count finds the
			// edge. {"s":"<87 x><2000 \n>"} and its newline: 4096 bytes.
			row := func(extra string) []recordstore.Values {
				return normalizeAll(allTypes(), []recordstore.Row{{"s": strings.Repeat("x", 87) + strings.Repeat("\n", 2000) + extra}})
			}
			name, err := d.Publish(ctx, sampleBatch(id, row("")), format)
			Expect(err).NotTo(HaveOccurred())
			b, err := d.Load(ctx, spool.StateIncoming, name.String())
			Expect(err).NotTo(HaveOccurred())
			got, err := b.ReadAll(ctx)
			Expect(err).NotTo(HaveOccurred(), "the owner's load accepts what a publish accepted")
			Expect(got.Entries[0].Rows).To(Equal(row("")))
			if format == spool.FormatNDJSON {
				Expect(b.Manifest.Entries[0].Bytes).To(BeEquivalentTo(4096))
			}

			_, err = d.Publish(ctx, sampleBatch(id, row("x")), format)
			Expect(err).To(MatchError(spool.ErrTooLarge))
			Expect(err).To(MatchError(ContainSubstring("entry 0")))
			names, err := d.List(ctx, spool.StateIncoming)
			Expect(err).NotTo(HaveOccurred())
			Expect(names).To(HaveLen(1), "only the first batch")
			expectEmpty(d, spool.StateTmp)
		},
		Entry("ndjson", spool.FormatNDJSON),
		Entry("ndjson.gz", spool.FormatNDJSONGz),
	)

	It("publishes a batch at the limits, and the owner's load accepts it", func() {
		rows := wide(10, 300)
		name, err := d.Publish(ctx, sampleBatch(id, rows), spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries[0].Rows).To(Equal(rows))
	})
})

func names(bs []spool.BatchName) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.String()
	}
	return out
}

func expectEmpty(d *spool.Dir, s spool.State) {
	GinkgoHelper()
	ents, err := os.ReadDir(d.Path(s, ""))
	Expect(err).NotTo(HaveOccurred())
	Expect(ents).To(BeEmpty(), string(s))
}

// sliceSource is a recordstore.RowSource over rows in memory. announce,
// when not zero, is the Len it claims instead of len(rows); err, when set,
// is what Next returns once failAt rows are read.
type sliceSource struct {
	rows     []recordstore.Values
	next     int
	announce int
	failAt   int
	err      error
}

func (s *sliceSource) Len() int {
	if s.announce != 0 {
		return s.announce
	}
	return len(s.rows)
}

func (s *sliceSource) Next() (recordstore.Values, error) {
	if s.err != nil && s.next == s.failAt {
		return nil, s.err
	}
	if s.next == len(s.rows) {
		return nil, io.EOF
	}
	s.next++
	return s.rows[s.next-1], nil
}
