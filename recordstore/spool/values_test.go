// Specs for the value rules on every spool path: Publish in each format
// refuses what a direct append refuses, and the decoders refuse it in a
// batch some other implementation wrote.

package spool_test

import (
	"bytes"
	"context"
	"strings"

	"github.com/klauspost/compress/gzip"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // registers the parquet codec
)

var _ = Describe("json column values on the spool paths", func() {
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
		DescribeTable("Publish refuses, in "+format+", stored json text the store's rules refuse",
			func(text, says string) {
				k := allTypes()
				_, err := d.Publish(ctx, oneEntry(id, k, []recordstore.Values{{nil, nil, nil, nil, nil, text}}), format)
				Expect(err).To(MatchError(recordstore.ErrInvalid))
				Expect(err).To(MatchError(ContainSubstring(says)))
				expectEmpty(d, spool.StateIncoming)
				expectEmpty(d, spool.StateTmp)
			},
			Entry("bytes that are not UTF-8", "[\"a\xffb\"]", "not valid UTF-8"),
			Entry("a lone surrogate escape", `{"a":"\ud800"}`, "lone UTF-16 surrogate"),
			Entry("a name twice in an inner object", `[{"a":1,"a":2}]`, "appears twice"),
		)
	}
})

var _ = Describe("the ndjson decoders on lines another implementation wrote", func() {
	decode := func(format string, text string) ([]recordstore.Values, error) {
		data := []byte(text)
		if format == spool.FormatNDJSONGz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(data)
			Expect(zw.Close()).To(Succeed())
			data = buf.Bytes()
		}
		codec, err := spool.Lookup(format)
		Expect(err).NotTo(HaveOccurred())
		return decodeAll(codec, allTypes(), data, spool.Limits{})
	}

	for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz} {
		DescribeTable("refuse, in "+format+", a value the store's rules refuse",
			func(line, says string) {
				_, err := decode(format, `{"s":"ok"}`+"\n"+line+"\n")
				Expect(err).To(MatchError(recordstore.ErrInvalid))
				Expect(err).To(MatchError(ContainSubstring("line 2")))
				Expect(err).To(MatchError(ContainSubstring(says)))
			},
			Entry("a string that is not UTF-8", "{\"s\":\"a\xffb\"}", "not valid UTF-8"),
			Entry("a lone high surrogate in a string", `{"s":"\ud800"}`, `\ud800 is a lone UTF-16 surrogate`),
			Entry("a lone low surrogate in a string", `{"s":"x\udc00"}`, `\udc00 is a lone UTF-16 surrogate`),
			Entry("json that is not UTF-8", "{\"j\":[\"\xff\"]}", "not valid UTF-8"),
			Entry("json with a lone surrogate escape", `{"j":{"a":"\udbff"}}`, "lone UTF-16 surrogate"),
			Entry("a column twice in the row", `{"i":1,"i":2}`, `column "i" appears twice`),
			Entry("a name twice in a json value", `{"j":{"a":1,"a":2}}`, `name "a" appears twice`),
			Entry("a name twice deep in a json value", `{"j":[1,{"b":{"c":[{"d":1,"e":2,"\u0064":3}]}}]}`, `appears twice`),
			Entry("1e-400 into an integer", `{"i":1e-400}`, "not an integer"),
			Entry("2^63 into an integer", `{"i":9223372036854775808}`, "outside int64"),
			Entry("1e400 into a number", `{"n":1e400}`, "outside the float64 range"),
			Entry("a +24:00 offset", `{"d":"2024-01-02T03:04:05+24:00"}`, "offset out of range"),
			Entry("ten fractional digits", `{"d":"2024-01-02T03:04:05.1234567891Z"}`, "more than 9 fractional digits"),
			Entry("a leap second", `{"d":"2016-12-31T23:59:60Z"}`, "leap second"),
			Entry("a byte order mark past the start", "\ufeff{\"s\":\"a\"}", "want a JSON object"),
		)

		It("skips a byte order mark at the start of the "+format+" stream", func() {
			got, err := decode(format, "\ufeff{\"s\":\"a\"}\n{\"i\":-0,\"d\":\"2024-01-02t03:04:05.123456789z\"}\n")
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal([]recordstore.Values{
				{"a", nil, nil, nil, nil, nil},
				{nil, int64(0), nil, nil, "2024-01-02T03:04:05.123456Z", nil},
			}))
		})
	}

	It("quotes a long unknown column name short, with its length", func() {
		name := strings.Repeat("c", 1<<20)
		_, err := decode(spool.FormatNDJSON, `{"`+name+`":1}`)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err).To(MatchError(ContainSubstring("(1048576 bytes)")))
		Expect(len(err.Error())).To(BeNumerically("<", 400))
	})
})
