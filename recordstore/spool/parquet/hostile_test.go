// Hostile input: garbage, truncation, lying footers and page headers. The
// decoder must refuse each with a typed error, without panicking and
// without allocating what the bytes claim.

package parquet_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	pq "github.com/fb46ecde/records/recordstore/spool/parquet"
)

// footerOf splits a file into its data region and parsed footer.
func footerOf(data []byte) ([]byte, *metadata.FileMetaData) {
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	meta, err := metadata.NewFileMetaData(data[len(data)-8-n:len(data)-8], nil)
	Expect(err).NotTo(HaveOccurred())
	return data[:len(data)-8-n], meta
}

// withFooter assembles a file from a data region and raw footer bytes.
func withFooter(region, footer []byte) []byte {
	out := append(append([]byte(nil), region...), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// rewriteFooter returns data with its footer changed by mutate.
func rewriteFooter(data []byte, mutate func(m *metadata.FileMetaData)) []byte {
	region, meta := footerOf(data)
	mutate(meta)
	footer, err := meta.Serialize(context.Background())
	Expect(err).NotTo(HaveOccurred())
	return withFooter(region, footer)
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// refusedAs decodes data with allTypes and returns the error, checking it
// is one of the codec's typed errors.
func refused(kind *recordstore.Kind, data []byte, lim spool.Limits) error {
	_, err := decodeAll(kind, data, lim)
	Expect(err).To(HaveOccurred())
	Expect(errors.Is(err, recordstore.ErrInvalid) || errors.Is(err, recordstore.ErrCapacity)).To(BeTrue(), "untyped error: %v", err)
	return err
}

// sample is a valid file of allTypes with 200 rows.
func sample() []byte {
	kind := allTypes()
	var rows []recordstore.Row
	for i := 0; i < 200; i++ {
		r := sampleRows()[i%6]
		r["id"] = fmt.Sprint(i)
		rows = append(rows, r)
	}
	return encode(kind, normalize(kind, rows))
}

// Compact-protocol bytes for hand-made page headers.
func zigzag(v int32) []byte { return binary.AppendUvarint(nil, uint64(uint32((v<<1)^(v>>31)))) }

func i32Field(delta byte, v int32) []byte { return append([]byte{delta<<4 | 5}, zigzag(v)...) }

// pageHeader encodes a PageHeader of type typ (0 data, 2 dictionary) with
// the given sizes and a nested header declaring values values.
func pageHeader(typ, uncompressed, compressed, values int32) []byte {
	b := i32Field(1, typ)
	b = append(b, i32Field(1, uncompressed)...)
	b = append(b, i32Field(1, compressed)...)
	if typ == 2 {
		b = append(b, 4<<4|12) // field 7, dictionary_page_header
		b = append(b, i32Field(1, values)...)
		b = append(b, i32Field(1, 0)...) // PLAIN
	} else {
		b = append(b, 2<<4|12) // field 5, data_page_header
		b = append(b, i32Field(1, values)...)
		b = append(b, i32Field(1, 0)...) // PLAIN
		b = append(b, i32Field(1, 3)...) // RLE definition levels
		b = append(b, i32Field(1, 3)...) // RLE repetition levels
	}
	return append(b, 0, 0) // stop nested, stop header
}

// handMade builds a one-row file of one required INT64 column "i" whose
// pages are exactly pages (header and body bytes), around the footer of a
// real file.
func handMade(pages []byte) []byte {
	real := writeRaw([]rawColumn{column(required("i", nil, parquet.Types.Int64), []int64{7}, nil)},
		parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false))
	_, meta := footerOf(real)
	cm := meta.RowGroups[0].Columns[0].MetaData
	cm.DataPageOffset = 4
	cm.DictionaryPageOffset = nil
	cm.TotalCompressedSize = int64(len(pages))
	cm.TotalUncompressedSize = int64(len(pages))
	cm.Statistics, cm.EncodingStats, cm.SizeStatistics = nil, nil, nil
	meta.RowGroups[0].Columns[0].ColumnIndexOffset = nil
	meta.RowGroups[0].Columns[0].ColumnIndexLength = nil
	meta.RowGroups[0].Columns[0].OffsetIndexOffset = nil
	meta.RowGroups[0].Columns[0].OffsetIndexLength = nil
	footer, err := meta.Serialize(context.Background())
	Expect(err).NotTo(HaveOccurred())
	return withFooter(append([]byte("PAR1"), pages...), footer)
}

var seven = binary.LittleEndian.AppendUint64(nil, 7)

var _ = Describe("hostile input", func() {
	kind := allTypes()

	DescribeTable("refuses bytes that are not parquet as corrupt",
		func(data []byte) {
			Expect(refused(kind, data, spool.Limits{})).To(MatchError(pq.ErrCorrupt))
		},
		Entry("an empty file", []byte{}),
		Entry("a tiny file", []byte("PAR1")),
		Entry("magic only", []byte("PAR1PAR1")),
		Entry("an empty footer", []byte("PAR1\x00\x00\x00\x00PAR1")),
		Entry("a text file", []byte("id,s,i\n1,hello,2\n3,world,4\n")),
		Entry("random bytes", func() []byte {
			r := rand.New(rand.NewPCG(1, 2))
			b := make([]byte, 4096)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		}()),
		Entry("random bytes between magic", func() []byte {
			r := rand.New(rand.NewPCG(3, 4))
			b := make([]byte, 4096)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			copy(b, "PAR1")
			binary.LittleEndian.PutUint32(b[4088:], 1000)
			copy(b[4092:], "PAR1")
			return b
		}()),
		Entry("a footer length larger than the file", func() []byte {
			b := bytes.Clone(sample())
			binary.LittleEndian.PutUint32(b[len(b)-8:], uint32(len(b)))
			return b
		}()),
		Entry("a footer length of 4 GiB", func() []byte {
			b := bytes.Clone(sample())
			binary.LittleEndian.PutUint32(b[len(b)-8:], 0xffffffff)
			return b
		}()),
		Entry("a damaged leading magic", func() []byte {
			b := bytes.Clone(sample())
			b[0] = 'X'
			return b
		}()),
	)

	It("refuses an encrypted file as unsupported", func() {
		b := bytes.Clone(sample())
		copy(b[len(b)-4:], "PARE")
		Expect(refused(kind, b, spool.Limits{})).To(MatchError(pq.ErrUnsupported))
	})

	It("refuses a footer larger than MaxFooterBytes before reading it", func() {
		b := make([]byte, pq.MaxFooterBytes+64)
		copy(b, "PAR1")
		binary.LittleEndian.PutUint32(b[len(b)-8:], pq.MaxFooterBytes+1)
		copy(b[len(b)-4:], "PAR1")
		var err error
		n := allocated(func() { err = refused(kind, b, spool.Limits{}) })
		Expect(err).To(MatchError(ContainSubstring("larger than the")))
		Expect(n).To(BeNumerically("<", 1<<20))
	})

	It("refuses every truncation of a valid file", func() {
		data := sample()
		for cut := 0; cut < len(data); cut += 1 + cut/16 {
			err := refused(kind, data[:cut], spool.Limits{})
			Expect(err).To(MatchError(pq.ErrCorrupt), "cut at %d", cut)
		}
	})

	It("refuses a file shorter than its declared size", func() {
		data := sample()
		_, err := codec().NewDecoder(bytes.NewReader(data), int64(len(data))+10, kind, spool.Limits{})
		Expect(err).To(MatchError(pq.ErrCorrupt))
		Expect(err.Error()).To(ContainSubstring("shorter than its declared"))
	})

	It("reads only the declared size of a longer reader", func() {
		data := sample()
		longer := append(bytes.Clone(data), "trailing bytes of another file"...)
		dec, err := codec().NewDecoder(bytes.NewReader(longer), int64(len(data)), kind, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(dec.Close()).To(Succeed())
	})

	It("returns read errors of the underlying reader unclassified", func() {
		data := sample()
		_, err := codec().NewDecoder(failingReaderAt{data, len(data) - 100}, int64(len(data)), kind, spool.Limits{})
		Expect(err).To(MatchError(errDiskFull))
		Expect(err).NotTo(MatchError(recordstore.ErrInvalid))
	})

	It("never panics and always answers with a typed error or valid rows when any byte is damaged", func() {
		data := sample()
		want, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		for i := range data {
			b := bytes.Clone(data)
			b[i] ^= 0x5a
			rows, err := decodeAll(kind, b, spool.Limits{MaxRows: 1000, MaxBytes: 1 << 20})
			if err != nil {
				Expect(errors.Is(err, recordstore.ErrInvalid) || errors.Is(err, recordstore.ErrCapacity)).To(BeTrue(), "byte %d: %v", i, err)
				continue
			}
			Expect(rows).To(HaveLen(len(want)), "byte %d", i)
			for _, r := range rows {
				Expect(kind.CheckRequired(r)).To(Succeed())
			}
		}
	})

	Describe("a footer that lies", func() {
		DescribeTable("is refused before any page is read",
			func(mutate func(m *metadata.FileMetaData), lim spool.Limits, sentinel error, msg string) {
				data := rewriteFooter(sample(), mutate)
				var err error
				n := allocated(func() { err = refused(kind, data, lim) })
				Expect(err).To(MatchError(sentinel))
				Expect(err.Error()).To(ContainSubstring(msg))
				Expect(n).To(BeNumerically("<", 4<<20))
			},
			Entry("huge row count, over MaxRows", func(m *metadata.FileMetaData) { m.NumRows = 1 << 62 },
				spool.Limits{MaxRows: 1000}, spool.ErrTooManyRows, "declares"),
			Entry("huge row count, no limit", func(m *metadata.FileMetaData) { m.NumRows = 1 << 62 },
				spool.Limits{}, pq.ErrCorrupt, "row groups hold"),
			Entry("negative row count", func(m *metadata.FileMetaData) { m.NumRows = -1 },
				spool.Limits{}, pq.ErrCorrupt, "-1 rows"),
			Entry("huge row group", func(m *metadata.FileMetaData) { m.NumRows = 1 << 40; m.RowGroups[0].NumRows = 1 << 40 },
				spool.Limits{}, pq.ErrCorrupt, "values for"),
			Entry("huge value count", func(m *metadata.FileMetaData) { m.RowGroups[0].Columns[2].MetaData.NumValues = 1 << 40 },
				spool.Limits{}, pq.ErrCorrupt, "values for"),
			Entry("huge uncompressed size, over MaxBytes", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[1].MetaData.TotalUncompressedSize = 1 << 50
			}, spool.Limits{MaxBytes: 1 << 20}, spool.ErrTooLarge, "uncompressed bytes"),
			Entry("negative uncompressed size", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[1].MetaData.TotalUncompressedSize = -1
			}, spool.Limits{}, pq.ErrCorrupt, "-1 uncompressed"),
			Entry("huge compressed size", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[1].MetaData.TotalCompressedSize = 1 << 50
			}, spool.Limits{}, pq.ErrCorrupt, "outside the data"),
			Entry("a page offset before the data", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[3].MetaData.DataPageOffset = -100
				m.RowGroups[0].Columns[3].MetaData.DictionaryPageOffset = nil
			}, spool.Limits{}, pq.ErrCorrupt, "outside the data"),
			Entry("a page offset inside the footer", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[3].MetaData.DataPageOffset = 1 << 40
				m.RowGroups[0].Columns[3].MetaData.DictionaryPageOffset = nil
			}, spool.Limits{}, pq.ErrCorrupt, "outside the data"),
			Entry("a missing column chunk", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns = m.RowGroups[0].Columns[:3]
			}, spool.Limits{}, pq.ErrCorrupt, "column chunks for"),
			Entry("a column chunk without metadata", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[4].MetaData = nil
			}, spool.Limits{}, pq.ErrCorrupt, ""),
			Entry("a chunk type that differs from the schema", func(m *metadata.FileMetaData) {
				m.RowGroups[0].Columns[2].MetaData.Type = 6 // BYTE_ARRAY for an INT64 column
			}, spool.Limits{}, pq.ErrCorrupt, "differs from the schema"),
			Entry("a chunk in another file", func(m *metadata.FileMetaData) {
				p := "elsewhere.parquet"
				m.RowGroups[0].Columns[0].FilePath = &p
			}, spool.Limits{}, pq.ErrUnsupported, "another file"),
		)

		It("claiming a list of a billion row groups is refused without allocating it", func() {
			// FileMetaData{1: version=1, 2: schema = list<struct> of 2^30}
			footer := []byte{0x15, 0x02, 0x19, 0xfc}
			footer = binary.AppendUvarint(footer, 1<<30)
			footer = append(footer, 0x00, 0x00)
			data := withFooter([]byte("PAR1"), footer)
			var err error
			n := allocated(func() { err = refused(kind, data, spool.Limits{}) })
			Expect(err).To(MatchError(pq.ErrCorrupt))
			Expect(err.Error()).To(ContainSubstring("container of 1073741824 elements"))
			Expect(n).To(BeNumerically("<", 1<<20))
		})

		It("claiming a string of a gigabyte is refused without allocating it", func() {
			// FileMetaData{6: created_by = binary of 2^30 bytes}
			footer := []byte{0x68}
			footer = binary.AppendUvarint(footer, 1<<30)
			footer = append(footer, "short"...)
			data := withFooter([]byte("PAR1"), footer)
			var err error
			n := allocated(func() { err = refused(kind, data, spool.Limits{}) })
			Expect(err).To(MatchError(pq.ErrCorrupt))
			Expect(n).To(BeNumerically("<", 1<<20))
		})

		It("packing many empty structs into a small footer is refused by its decoded size", func() {
			// FileMetaData{4: row_groups = list<struct> of 1M empty structs}
			footer := []byte{0x15, 0x02, 0x29, 0xfc}
			footer = binary.AppendUvarint(footer, 1<<20)
			footer = append(footer, make([]byte, 1<<20)...)
			footer = append(footer, 0x00)
			data := withFooter([]byte("PAR1"), footer)
			err := refused(kind, data, spool.Limits{})
			Expect(err).To(MatchError(pq.ErrCorrupt))
			Expect(err.Error()).To(ContainSubstring("would decode to about"))
		})
	})

	Describe("a page header that lies", func() {
		one := oneColumn("i", recordstore.TypeInteger, true)

		It("is recognised when honest (the hand-made file is sound)", func() {
			got, err := decodeAll(one, handMade(append(pageHeader(0, 8, 8, 1), seven...)), spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal([]recordstore.Values{{int64(7)}}))
		})

		DescribeTable("is refused before arrow-go trusts it",
			func(pages []byte, lim spool.Limits, sentinel error, msg string) {
				var err error
				n := allocated(func() { err = refused(one, handMade(pages), lim) })
				Expect(err).To(MatchError(sentinel))
				Expect(err.Error()).To(ContainSubstring(msg))
				Expect(n).To(BeNumerically("<", 4<<20))
			},
			Entry("an uncompressed size of 1 GiB", append(pageHeader(0, 1<<30, 8, 1), seven...),
				spool.Limits{}, spool.ErrTooLarge, "page limit"),
			Entry("an uncompressed size over MaxBytes", append(pageHeader(0, 4096, 8, 1), seven...),
				spool.Limits{MaxBytes: 2048}, spool.ErrTooLarge, "page limit"),
			Entry("a compressed size past the data", append(pageHeader(0, 8, 1<<30, 1), seven...),
				spool.Limits{}, pq.ErrCorrupt, "runs past the data"),
			Entry("a negative size", append(pageHeader(0, -8, 8, 1), seven...),
				spool.Limits{}, pq.ErrCorrupt, "negative size"),
			Entry("more values than the chunk", append(pageHeader(0, 8, 8, 1000), seven...),
				spool.Limits{}, pq.ErrCorrupt, "more than the 1 left"),
			Entry("fewer values than the chunk", append(pageHeader(0, 8, 8, 0), seven...),
				spool.Limits{}, pq.ErrCorrupt, "pages hold 0 values"),
			Entry("a dictionary of a billion entries in 8 bytes",
				append(append(pageHeader(2, 8, 8, 1<<30), seven...), append(pageHeader(0, 8, 8, 1), seven...)...),
				spool.Limits{}, pq.ErrCorrupt, "dictionary page declares 1073741824 values"),
			Entry("a header that is not thrift", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
				spool.Limits{}, pq.ErrCorrupt, "page header"),
			Entry("a header without sizes", append([]byte{0x15, 0x00, 0x00}, seven...),
				spool.Limits{}, pq.ErrCorrupt, "lacks its type or sizes"),
		)
	})

	Describe("limits", func() {
		It("allows exactly MaxRows rows and refuses one more from the footer, before reading", func() {
			data := sample()
			got, err := decodeAll(kind, data, spool.Limits{MaxRows: 200})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(HaveLen(200))
			_, err = codec().NewDecoder(bytes.NewReader(data), int64(len(data)), kind, spool.Limits{MaxRows: 199})
			Expect(err).To(MatchError(spool.ErrTooManyRows))
			Expect(err).To(MatchError(recordstore.ErrCapacity))
		})

		It("refuses a file larger than MaxBytes before reading", func() {
			data := sample()
			_, err := codec().NewDecoder(bytes.NewReader(data), int64(len(data)), kind, spool.Limits{MaxBytes: int64(len(data)) - 1})
			Expect(err).To(MatchError(spool.ErrTooLarge))
			Expect(err).To(MatchError(recordstore.ErrCapacity))
		})

		It("stops a small file whose rows decode to more than MaxBytes while reading", func() {
			one := oneColumn("s", recordstore.TypeString, false)
			big := string(bytes.Repeat([]byte("x"), 10_000))
			vals := make([]recordstore.Values, 5000)
			for i := range vals {
				vals[i] = recordstore.Values{big}
			}
			data := encode(one, vals)
			Expect(len(data)).To(BeNumerically("<", 100_000))
			got, err := decodeAll(one, data, spool.Limits{MaxBytes: 1 << 20})
			Expect(err).To(MatchError(spool.ErrTooLarge))
			Expect(len(got)).To(BeNumerically("<", 5000))
			got, err = decodeAll(one, data, spool.Limits{MaxBytes: 60 << 20})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(HaveLen(5000))
		})
	})
})

// failingReaderAt serves data but fails reads that reach past limit.
type failingReaderAt struct {
	data  []byte
	limit int
}

func (r failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if int(off)+len(p) > r.limit {
		return 0, errDiskFull
	}
	return copy(p, r.data[off:]), nil
}
