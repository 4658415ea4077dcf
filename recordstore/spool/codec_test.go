// Codec round trips, limits and the registry.

package spool_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/klauspost/compress/gzip"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("the registry", func() {
	It("lists the built-in formats sorted", func() {
		Expect(spool.Formats()).To(ContainElements(spool.FormatNDJSON, spool.FormatNDJSONGz))
		f := spool.Formats()
		Expect(f).To(Equal(sortedCopy(f)))
	})

	It("refuses an unknown format with ErrUnknownCodec", func() {
		_, err := spool.Lookup("csv")
		Expect(err).To(MatchError(spool.ErrUnknownCodec))
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("panics when a name is registered twice", func() {
		c, err := spool.Lookup(spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		Expect(func() { spool.Register(c) }).To(PanicWith(ContainSubstring("registered twice")))
	})
})

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

var _ = Describe("the ndjson codecs", func() {
	for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz} {
		codec, err := spool.Lookup(format)
		if err != nil {
			panic(err)
		}

		It("round trips every column type exactly through "+format, func() {
			kind := allTypes()
			want := normalizeAll(kind, edgeRows())
			data, err := encodeAll(codec, kind, want)
			Expect(err).NotTo(HaveOccurred())
			got, err := decodeAll(codec, kind, data, spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
			Expect(got[0][1]).To(Equal(int64(9223372036854775807)))
			Expect(got[1][1]).To(Equal(int64(-9223372036854775808)))
			Expect(got[0][4]).To(Equal("2024-02-29T23:59:59.123456Z"))
			Expect(got[2][5]).To(BeNil(), "a JSON null in a json column is SQL NULL (recordstore.JSONNull)")
			Expect(got[5]).To(Equal(recordstore.Values{nil, nil, nil, nil, nil, nil}))
		})

		It("stops with ErrTooManyRows at the row cap of "+format, func() {
			kind := keyed()
			rows := make([]recordstore.Values, 5)
			for i := range rows {
				rows[i] = recordstore.Values{"k", int64(i)}
			}
			data, err := encodeAll(codec, kind, rows)
			Expect(err).NotTo(HaveOccurred())
			got, err := decodeAll(codec, kind, data, spool.Limits{MaxRows: 3})
			Expect(err).To(MatchError(spool.ErrTooManyRows))
			Expect(err).To(MatchError(recordstore.ErrCapacity))
			Expect(got).To(HaveLen(3))
		})

		It("stops with ErrTooLarge at the byte cap of "+format+", inside one long line", func() {
			kind := keyed()
			long := strings.Repeat("x", 1<<20)
			data, err := encodeAll(codec, kind, []recordstore.Values{{long, int64(1)}})
			Expect(err).NotTo(HaveOccurred())
			_, err = decodeAll(codec, kind, data, spool.Limits{MaxBytes: 200 << 10})
			Expect(err).To(MatchError(spool.ErrTooLarge))
			got, err := decodeAll(codec, kind, data, spool.Limits{MaxBytes: 2 << 20})
			Expect(err).NotTo(HaveOccurred())
			Expect(got[0][0]).To(Equal(long), "no line-length limit below the byte cap")
		})

		It("refuses values that are not stored values with ErrInvalid in "+format, func() {
			kind := allTypes()
			for _, bad := range []recordstore.Values{
				{int64(1), nil, nil, nil, nil, nil},
				{nil, 1.5, nil, nil, nil, nil},
				{nil, nil, int64(1), nil, nil, nil},
				{nil, nil, nil, int64(2), nil, nil},
				{nil, nil, nil, nil, "2024-01-01", nil},
				{nil, nil, nil, nil, nil, `{"a":`},
				{"\xff", nil, nil, nil, nil, nil},
				{nil},
			} {
				_, err := encodeAll(codec, kind, []recordstore.Values{bad})
				Expect(err).To(MatchError(recordstore.ErrInvalid), "%#v", bad)
			}
		})
	}

	It("writes one JSON object per line in column order, nulls omitted", func() {
		codec, _ := spool.Lookup(spool.FormatNDJSON)
		kind := allTypes()
		data, err := encodeAll(codec, kind, []recordstore.Values{
			{"a\"b\n", int64(-7), 0.1, int64(1), "2024-01-02T03:04:05.000000Z", `{"z":[1,"\u00e9"]}`},
			{nil, nil, 1e21, int64(0), nil, "null"},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal(
			`{"s":"a\"b\n","i":-7,"n":0.1,"b":true,"d":"2024-01-02T03:04:05.000000Z","j":{"z":[1,"\u00e9"]}}` + "\n" +
				`{"n":1e+21,"b":false,"j":null}` + "\n"))
	})

	It("reads lines with CRLF endings, blank lines and no final newline", func() {
		codec, _ := spool.Lookup(spool.FormatNDJSON)
		data := []byte("{\"k\":\"a\"}\r\n\n  \n{\"k\":\"b\",\"v\":2}")
		got, err := decodeAll(codec, keyed(), data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]recordstore.Values{{"a", nil}, {"b", int64(2)}}))
	})

	It("names the line of a bad row", func() {
		codec, _ := spool.Lookup(spool.FormatNDJSON)
		_, err := decodeAll(codec, keyed(), []byte("{\"k\":\"a\"}\n{\"k\":1}\n"), spool.Limits{})
		Expect(err).To(MatchError(ContainSubstring("line 2")))
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	It("refuses truncated, corrupt and trailing-garbage gzip with ErrInvalid", func() {
		codec, _ := spool.Lookup(spool.FormatNDJSONGz)
		rows := make([]recordstore.Values, 2000)
		for i := range rows {
			rows[i] = recordstore.Values{strings.Repeat("k", i%50), int64(i)}
		}
		data, err := encodeAll(codec, keyed(), rows)
		Expect(err).NotTo(HaveOccurred())
		for name, bad := range map[string][]byte{
			"truncated":     data[:len(data)/2],
			"no trailer":    data[:len(data)-4],
			"bad checksum":  flipByte(data, len(data)-6),
			"garbage after": append(append([]byte(nil), data...), "junk"...),
			"not gzip":      []byte("{\"k\":\"a\"}\n"),
			"empty":         nil,
		} {
			_, err := decodeAll(codec, keyed(), bad, spool.Limits{})
			Expect(err).To(MatchError(recordstore.ErrInvalid), name)
		}
	})

	It("bounds a gzip bomb by the byte cap, reading only a bounded prefix", func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zeros := make([]byte, 1<<20)
		for i := range zeros {
			zeros[i] = ' '
		}
		for range 128 { // 128 MiB of spaces inside one line, a few hundred KiB compressed
			_, _ = zw.Write(zeros)
		}
		Expect(zw.Close()).To(Succeed())
		Expect(buf.Len()).To(BeNumerically("<", 2<<20))
		codec, _ := spool.Lookup(spool.FormatNDJSONGz)
		dec, err := codec.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()), keyed(), spool.Limits{MaxBytes: 8 << 20})
		Expect(err).NotTo(HaveOccurred())
		defer dec.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = dec.Next()
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(spool.ErrTooLarge))
		Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 32<<20), "allocation bounded by the 8 MiB cap, not the 128 MiB content")
	})

	It("returns io.EOF after the last row and keeps returning it", func() {
		codec, _ := spool.Lookup(spool.FormatNDJSON)
		dec, err := codec.NewDecoder(strings.NewReader("{\"k\":\"a\"}\n"), 10, keyed(), spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		_, err = dec.Next()
		Expect(err).NotTo(HaveOccurred())
		_, err = dec.Next()
		Expect(err).To(Equal(io.EOF))
		_, err = dec.Next()
		Expect(err).To(Equal(io.EOF))
		Expect(dec.Close()).To(Succeed())
	})
})

func flipByte(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0xff
	return out
}

var _ = Describe("the encoder's datetime check", func() {
	// reference: what ParseDatetime parses and Format reproduces
	reference := func(s string) bool {
		t, err := recordstore.ParseDatetime(s)
		return err == nil && t.Format(recordstore.DatetimeLayout) == s
	}

	DescribeTable("agrees with ParseDatetime + Format",
		func(s string) { Expect(recordstore.IsStoredDatetime(s)).To(Equal(reference(s)), s) },
		Entry("a plain instant", "2024-01-02T03:04:05.123456Z"),
		Entry("year 0000", "0000-01-01T00:00:00.000000Z"),
		Entry("year 9999 end", "9999-12-31T23:59:59.999999Z"),
		Entry("a leap day", "2024-02-29T00:00:00.000000Z"),
		Entry("a leap day in 2000", "2000-02-29T00:00:00.000000Z"),
		Entry("no leap day in 1900", "1900-02-29T00:00:00.000000Z"),
		Entry("no leap day in 2023", "2023-02-29T00:00:00.000000Z"),
		Entry("day 31 of a 30-day month", "2024-04-31T00:00:00.000000Z"),
		Entry("month 13", "2024-13-01T00:00:00.000000Z"),
		Entry("month 00", "2024-00-01T00:00:00.000000Z"),
		Entry("day 00", "2024-01-00T00:00:00.000000Z"),
		Entry("hour 24", "2024-01-01T24:00:00.000000Z"),
		Entry("minute 60", "2024-01-01T00:60:00.000000Z"),
		Entry("second 60", "2024-01-01T00:00:60.000000Z"),
		Entry("nanoseconds", "2024-01-01T00:00:00.000000000Z"),
		Entry("an offset", "2024-01-01T00:00:00.000000+00:00"),
		Entry("no fraction", "2024-01-01T00:00:00Z"),
		Entry("a lowercase z", "2024-01-01T00:00:00.000000z"),
		Entry("a space for T", "2024-01-01 00:00:00.000000Z"),
		Entry("empty", ""),
	)

	It("agrees on every day of a leap cycle", func() {
		start := time.Date(1999, 12, 25, 0, 0, 0, 0, time.UTC)
		for d := 0; d < 4*366+10; d++ {
			t := start.AddDate(0, 0, d)
			for _, day := range []int{t.Day(), 29, 30, 31} {
				s := fmt.Sprintf("%04d-%02d-%02dT12:34:56.000001Z", t.Year(), int(t.Month()), day)
				Expect(recordstore.IsStoredDatetime(s)).To(Equal(reference(s)), s)
			}
		}
	})
})
