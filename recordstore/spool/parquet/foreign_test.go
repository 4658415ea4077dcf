// Files written directly with arrow-go, the way other tools write them:
// other timestamp units, INT96, narrower integers, floats, plain or
// dictionary pages, V2 pages, other compressions, required columns.

package parquet_test

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

var (
	t1 = time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.UTC)
	t2 = time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)
	t3 = time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC)
)

// int96 encodes t as a legacy INT96 timestamp.
func int96(t time.Time) parquet.Int96 {
	var v parquet.Int96
	day := t.Unix() / 86400
	if t.Unix()%86400 < 0 {
		day-- // floor, for times before 1970
	}
	nanos := t.Sub(time.Unix(day*86400, 0))
	binary.LittleEndian.PutUint64(v[:8], uint64(nanos))
	binary.LittleEndian.PutUint32(v[8:], uint32(day+2_440_588))
	return v
}

// want normalizes single-column rows.
func want(kind *recordstore.Kind, vals ...any) []recordstore.Values {
	rows := make([]recordstore.Row, len(vals))
	for i, v := range vals {
		rows[i] = recordstore.Row{kind.Columns[0].Name: v}
	}
	return normalize(kind, rows)
}

var _ = Describe("reading files other writers produce", func() {
	defs := []int16{1, 0, 1, 1}

	DescribeTable("converts a foreign column exactly as Normalize would",
		func(t recordstore.ColumnType, col rawColumn, expect []any) {
			kind := oneColumn(col.node.Name(), t, false)
			got, err := decodeAll(kind, writeRaw([]rawColumn{col}), spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want(kind, expect...)))
		},
		Entry("TIMESTAMP(MILLIS)", recordstore.TypeDatetime,
			column(optional("d", schema.NewTimestampLogicalType(true, schema.TimeUnitMillis), parquet.Types.Int64),
				[]int64{t1.UnixMilli(), t2.UnixMilli(), 0}, defs),
			[]any{t1.Truncate(time.Millisecond), nil, t2.Truncate(time.Millisecond), time.Unix(0, 0)}),
		Entry("TIMESTAMP(NANOS), truncated to microseconds", recordstore.TypeDatetime,
			column(optional("d", schema.NewTimestampLogicalType(true, schema.TimeUnitNanos), parquet.Types.Int64),
				[]int64{t1.UnixNano(), t2.UnixNano(), math.MaxInt64}, defs),
			[]any{t1, nil, t2, time.Unix(0, math.MaxInt64)}),
		Entry("TIMESTAMP(MICROS) not adjusted to UTC, taken as UTC", recordstore.TypeDatetime,
			column(optional("d", schema.NewTimestampLogicalType(false, schema.TimeUnitMicros), parquet.Types.Int64),
				[]int64{t1.UnixMicro(), t2.UnixMicro(), t3.UnixMicro()}, defs),
			[]any{t1, nil, t2, t3}),
		Entry("INT96", recordstore.TypeDatetime,
			column(optional("d", nil, parquet.Types.Int96),
				[]parquet.Int96{int96(t1), int96(t2), int96(t3)}, defs),
			[]any{t1, nil, t2, t3}),
		Entry("INT32 integers", recordstore.TypeInteger,
			column(optional("i", nil, parquet.Types.Int32), []int32{math.MaxInt32, math.MinInt32, 0}, defs),
			[]any{math.MaxInt32, nil, math.MinInt32, 0}),
		Entry("INT(16, signed) integers", recordstore.TypeInteger,
			column(optional("i", schema.NewIntLogicalType(16, true), parquet.Types.Int32), []int32{-32768, 32767, 1}, defs),
			[]any{-32768, nil, 32767, 1}),
		Entry("UINT_32 integers above MaxInt32", recordstore.TypeInteger,
			column(optional("i", schema.NewIntLogicalType(32, false), parquet.Types.Int32), []int32{-1, 7, math.MinInt32}, defs),
			[]any{uint32(math.MaxUint32), nil, 7, uint32(1 << 31)}),
		Entry("UINT_64 integers that fit int64", recordstore.TypeInteger,
			column(optional("i", schema.NewIntLogicalType(64, false), parquet.Types.Int64), []int64{math.MaxInt64, 0, 1}, defs),
			[]any{int64(math.MaxInt64), nil, 0, 1}),
		Entry("INT64 integers annotated INT(64, signed)", recordstore.TypeInteger,
			column(optional("i", schema.NewIntLogicalType(64, true), parquet.Types.Int64), []int64{math.MinInt64, 5, -5}, defs),
			[]any{int64(math.MinInt64), nil, 5, -5}),
		Entry("FLOAT numbers", recordstore.TypeNumber,
			column(optional("n", nil, parquet.Types.Float), []float32{1.5, -0.1, math.MaxFloat32}, defs),
			[]any{float32(1.5), nil, float32(-0.1), float32(math.MaxFloat32)}),
		Entry("INT64 numbers", recordstore.TypeNumber,
			column(optional("n", nil, parquet.Types.Int64), []int64{1 << 60, -3, 0}, defs),
			[]any{int64(1 << 60), nil, -3, 0}),
		Entry("INT32 numbers", recordstore.TypeNumber,
			column(optional("n", nil, parquet.Types.Int32), []int32{-7, 8, 9}, defs),
			[]any{-7, nil, 8, 9}),
		Entry("unannotated BYTE_ARRAY strings", recordstore.TypeString,
			column(optional("s", nil, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("x"), parquet.ByteArray("é"), parquet.ByteArray("")}, defs),
			[]any{"x", nil, "é", ""}),
		Entry("ENUM strings", recordstore.TypeString,
			column(optional("s", schema.EnumLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("red"), parquet.ByteArray("green"), parquet.ByteArray("red")}, defs),
			[]any{"red", nil, "green", "red"}),
		Entry("JSON-annotated json, compacted", recordstore.TypeJSON,
			column(optional("j", schema.JSONLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray(`{ "a" : [1, 2] }`), parquet.ByteArray(` "s" `), parquet.ByteArray(`null`)}, defs),
			[]any{map[string]any{"a": []any{1, 2}}, nil, "s", nil}), // JSON null is SQL NULL
		Entry("REQUIRED booleans", recordstore.TypeBool,
			column(required("b", nil, parquet.Types.Boolean), []bool{true, false, true}, nil),
			[]any{true, false, true}),
	)

	DescribeTable("reads every page layout and compression",
		func(props ...parquet.WriterProperty) {
			kind := allTypes()
			vals := normalize(kind, sampleRows())
			data := encode(kind, vals)
			// Re-write the same values with other writer settings through
			// the rows the codec decoded, column by column.
			got, err := decodeAll(kind, data, spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			raw := rawFromValues(kind, got)
			again, err := decodeAll(kind, writeRaw(raw, props...), spool.Limits{})
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(Equal(vals))
		},
		Entry("uncompressed, plain", parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false)),
		Entry("snappy, dictionary", parquet.WithCompression(compress.Codecs.Snappy)),
		Entry("gzip, V2 pages", parquet.WithCompression(compress.Codecs.Gzip), parquet.WithDataPageVersion(parquet.DataPageV2)),
		Entry("zstd, V2 pages, plain", parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDictionaryDefault(false)),
		Entry("brotli, tiny pages", parquet.WithCompression(compress.Codecs.Brotli), parquet.WithDataPageSize(8)),
		Entry("lz4 raw", parquet.WithCompression(compress.Codecs.Lz4Raw)),
	)

	It("maps columns by name whatever their order in the file", func() {
		kind := &recordstore.Kind{Name: "k", Columns: []recordstore.Column{
			{Name: "a", Type: recordstore.TypeInteger}, {Name: "b", Type: recordstore.TypeString}, {Name: "c", Type: recordstore.TypeBool}}}
		Expect(kind.Validate()).To(Succeed())
		data := writeRaw([]rawColumn{
			column(required("c", nil, parquet.Types.Boolean), []bool{true}, nil),
			column(optional("a", nil, parquet.Types.Int32), []int32{3}, []int16{1}),
		})
		got, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]recordstore.Values{{int64(3), nil, int64(1)}}))
	})
})
