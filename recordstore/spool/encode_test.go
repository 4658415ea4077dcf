// The encoding of a publish: large entries are encoded in parallel chunks,
// byte for byte what one encoder writing row after row produces, and the
// fast paths of the value encoder agree with the general ones.

package spool_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/klauspost/compress/gzip"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// manyRows returns n normalized rows of allTypes, cycling through the
// edge rows and varying every column.
func manyRows(n int) []recordstore.Values {
	edges := edgeRows()
	rows := make([]recordstore.Row, n)
	for i := range rows {
		r := recordstore.Row{}
		for k, v := range edges[i%len(edges)] {
			r[k] = v
		}
		if i%3 == 0 {
			r["s"] = fmt.Sprintf("row %d \"%c\"", i, rune('a'+i%26))
			r["i"] = int64(i) * 7919
			r["n"] = float64(i) / 8
		}
		rows[i] = r
	}
	return normalizeAll(allTypes(), rows)
}

var _ = Describe("publish encoding", func() {
	ctx := context.Background()

	DescribeTable("parallel chunks give the bytes of one encoder, row after row",
		func(format string, n int) {
			codec, err := spool.Lookup(format)
			Expect(err).NotTo(HaveOccurred())
			rows := manyRows(n)
			want, err := spool.EncodeSequential(codec, allTypes(), rows)
			Expect(err).NotTo(HaveOccurred())
			got, size, sum, err := spool.EncodeEntry(ctx, codec, allTypes(), rows)
			Expect(err).NotTo(HaveOccurred())
			if format == spool.FormatNDJSONGz {
				// The compressed bytes may differ with the write sizes;
				// the lines inside must not.
				want, got = gunzip(want), gunzip(got)
			} else {
				Expect(size).To(BeEquivalentTo(len(got)))
				h := sha256.Sum256(got)
				Expect(sum).To(Equal(hex.EncodeToString(h[:])))
			}
			Expect(bytes.Count(got, []byte("\n"))).To(Equal(n))
			Expect(got).To(Equal(want))
		},
		Entry("ndjson, below the parallel threshold", spool.FormatNDJSON, 100),
		Entry("ndjson, a few chunks", spool.FormatNDJSON, 1000),
		Entry("ndjson, many chunks", spool.FormatNDJSON, 30_001),
		Entry("ndjson.gz, many chunks", spool.FormatNDJSONGz, 20_000),
	)

	It("a published large entry loads back row for row", func() {
		d := newDir(spool.Options{})
		id := spool.NewIdentity("test")
		rows := manyRows(12_345)
		del := sampleBatch(id, rows)
		name, err := d.Publish(ctx, del, spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Verify(ctx)).To(Succeed())
		got, err := b.ReadAll(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Entries[0].Rows).To(Equal(rows))
	})

	DescribeTable("a bad row deep in a large entry is named, and nothing is published",
		func(bad int) {
			d := newDir(spool.Options{Prepare: true})
			id := spool.NewIdentity("test")
			rows := manyRows(20_000)
			rows[bad] = append(recordstore.Values(nil), rows[bad]...)
			rows[bad][2] = math.Inf(1) // not a finite number
			_, err := d.Publish(ctx, sampleBatch(id, rows), spool.FormatNDJSON)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("row " + strconv.Itoa(bad+1) + ":")))
			names, err := d.List(ctx, spool.StateIncoming)
			Expect(err).NotTo(HaveOccurred())
			Expect(names).To(BeEmpty())
			Expect(tmpTree(d)).To(BeEmpty())
		},
		Entry("in the first chunk", 3),
		Entry("in a middle chunk", 9_999),
		Entry("the last row", 19_999),
	)

	It("the first of several bad rows is the one reported", func() {
		codec, err := spool.Lookup(spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		rows := manyRows(20_000)
		for _, bad := range []int{17_000, 4_321, 12_000} {
			rows[bad] = append(recordstore.Values(nil), rows[bad]...)
			rows[bad][2] = math.NaN()
		}
		_, _, _, err = spool.EncodeEntry(ctx, codec, allTypes(), rows)
		Expect(err).To(MatchError(ContainSubstring("row 4322:")))
	})

	It("a canceled context stops the encoding", func() {
		codec, err := spool.Lookup(spool.FormatNDJSON)
		Expect(err).NotTo(HaveOccurred())
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, _, _, err = spool.EncodeEntry(canceled, codec, allTypes(), manyRows(10_000))
		Expect(err).To(MatchError(context.Canceled))
	})

	It("whole numbers take the short path with the bytes of strconv's 'g'", func() {
		values := []float64{0, 1, -1, 2.5, 999_999, -999_999, 1e6, -1e6, 123_456, 1e21, 0.1, 1 << 53, math.Copysign(0, -1), 5e-324, 100_000}
		for i := -2000; i <= 2000; i++ {
			values = append(values, float64(i), float64(i)*0.5, float64(i)*997)
		}
		for _, f := range values {
			got, err := spool.AppendValue(recordstore.TypeNumber, f)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(strconv.FormatFloat(f, 'g', -1, 64)), "%v", f)
		}
		got, err := spool.AppendValue(recordstore.TypeNumber, math.Copysign(0, -1))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("-0"))
	})

	It("numbers of up to three decimals take the short path with the bytes of strconv's 'g'", func() {
		values := []float64{0.001, -0.001, 0.0005, 0.0015, 0.1, 0.2, 0.1 + 0.2, 0.3, 1.0 / 3, 2.0 / 3, 3.25, 999_999.999,
			-999_999.999, 999_999.9995, 0.999, 0.9995, 1e-3 - 1e-19, 123_456.789, 0.007, 0.07, 0.7, 5.05, 1.005, 1.0005,
			math.Nextafter(0.5, 1), math.Nextafter(0.5, 0), math.Nextafter(1234.125, 2000), math.Nextafter(0.001, 0)}
		for i := -1_000_000; i <= 1_000_000; i += 7 {
			values = append(values, float64(i)/1000, float64(i)/100+0.005, float64(i)*1.001)
		}
		for i := 999_000_000; i < 999_999_999; i += 997 {
			values = append(values, float64(i)/1000, -float64(i)/1000)
		}
		for _, f := range values {
			got, err := spool.AppendValue(recordstore.TypeNumber, f)
			Expect(err).NotTo(HaveOccurred())
			if string(got) != strconv.FormatFloat(f, 'g', -1, 64) {
				Fail(fmt.Sprintf("%v encoded as %s, strconv gives %s", f, got, strconv.FormatFloat(f, 'g', -1, 64)))
			}
		}
	})

	DescribeTable("strings take the plain path only when nothing needs escaping",
		func(s, want string) {
			got, err := spool.AppendValue(recordstore.TypeString, s)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))
		},
		Entry("plain ASCII", "host-a.example.org", `"host-a.example.org"`),
		Entry("empty", "", `""`),
		Entry("a quote after plain bytes", `ab"c`, `"ab\"c"`),
		Entry("a backslash", `a\b`, `"a\\b"`),
		Entry("a control byte", "a\x01b", `"a\u0001b"`),
		Entry("a newline", "a\nb", `"a\nb"`),
		Entry("unicode after plain bytes", "abc ü 😀", `"abc ü 😀"`),
		Entry("DEL is plain", "a\x7fb", "\"a\x7fb\""),
	)

	It("a string with invalid UTF-8 after plain bytes is refused", func() {
		_, err := spool.AppendValue(recordstore.TypeString, "plain prefix \xff")
		Expect(err).To(MatchError(ContainSubstring("not valid UTF-8")))
	})

	It("compact JSON is copied, spaced JSON compacted", func() {
		got, err := spool.AppendValue(recordstore.TypeJSON, `{"a":[1,2],"b":"x y"}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal(`{"a":[1,2],"b":"x y"}`))
		got, err = spool.AppendValue(recordstore.TypeJSON, " {\"a\" : [1, 2],\n\"b\":\"x y\"} ")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal(`{"a":[1,2],"b":"x y"}`))
		_, err = spool.AppendValue(recordstore.TypeJSON, `{"a":[1,2}`)
		Expect(err).To(MatchError(ContainSubstring("malformed JSON value")))
	})
})

// gunzip returns the decompressed content of a (possibly multi-member)
// gzip stream.
func gunzip(b []byte) []byte {
	GinkgoHelper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	Expect(err).NotTo(HaveOccurred())
	out, err := io.ReadAll(r)
	Expect(err).NotTo(HaveOccurred())
	return out
}
