// Files whose schema or values do not fit the kind: extra, missing,
// mistyped, nested and repeated columns, nulls in required columns and
// values the kind refuses.

package parquet_test

import (
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	pq "github.com/fb46ecde/records/recordstore/spool/parquet"
)

var _ = Describe("schema checks", func() {
	It("reads a column missing from the file as null", func() {
		kind := allTypes()
		data := writeRaw([]rawColumn{
			column(required("id", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("x"), parquet.ByteArray("y")}, nil),
			column(required("r", nil, parquet.Types.Int64), []int64{1, 2}, nil),
		})
		got, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(normalize(kind, []recordstore.Row{{"id": "x", "r": 1}, {"id": "y", "r": 2}})))
	})

	DescribeTable("refuses a file that does not fit the kind, naming the column",
		func(kind *recordstore.Kind, col rawColumn, name string) {
			_, err := decodeAll(kind, writeRaw([]rawColumn{col}), spool.Limits{})
			Expect(err).To(MatchError(pq.ErrSchemaMismatch))
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(name))
		},
		Entry("a column the kind does not declare",
			oneColumn("s", recordstore.TypeString, false),
			column(optional("extra", nil, parquet.Types.Int64), []int64{1}, []int16{1}), "extra"),
		Entry("a required column missing from the file",
			oneColumn("s", recordstore.TypeString, true),
			column(optional("other", nil, parquet.Types.Int64), []int64{1}, []int16{1}), "other"),
		Entry("a string stored as INT64",
			oneColumn("s", recordstore.TypeString, false),
			column(optional("s", nil, parquet.Types.Int64), []int64{1}, []int16{1}), "column s"),
		Entry("an integer stored as DOUBLE (never through float)",
			oneColumn("i", recordstore.TypeInteger, false),
			column(optional("i", nil, parquet.Types.Double), []float64{1}, []int16{1}), "column i"),
		Entry("an integer stored as a TIMESTAMP",
			oneColumn("i", recordstore.TypeInteger, false),
			column(optional("i", schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64), []int64{1}, []int16{1}), "column i"),
		Entry("a number stored as DECIMAL",
			oneColumn("n", recordstore.TypeNumber, false),
			column(optional("n", schema.NewDecimalLogicalType(9, 2), parquet.Types.Int32), []int32{1}, []int16{1}), "column n"),
		Entry("a number stored as text",
			oneColumn("n", recordstore.TypeNumber, false),
			column(optional("n", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("1")}, []int16{1}), "column n"),
		Entry("a bool stored as INT32",
			oneColumn("b", recordstore.TypeBool, false),
			column(optional("b", nil, parquet.Types.Int32), []int32{1}, []int16{1}), "column b"),
		Entry("a datetime stored as a plain INT64",
			oneColumn("d", recordstore.TypeDatetime, false),
			column(optional("d", nil, parquet.Types.Int64), []int64{1}, []int16{1}), "column d"),
		Entry("a datetime stored as a DATE",
			oneColumn("d", recordstore.TypeDatetime, false),
			column(optional("d", schema.DateLogicalType{}, parquet.Types.Int32), []int32{1}, []int16{1}), "column d"),
		Entry("a datetime stored as text",
			oneColumn("d", recordstore.TypeDatetime, false),
			column(optional("d", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("2024-01-01T00:00:00Z")}, []int16{1}), "column d"),
		Entry("json stored as BSON",
			oneColumn("j", recordstore.TypeJSON, false),
			column(optional("j", schema.BSONLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("x")}, []int16{1}), "column j"),
		Entry("a string stored as a FIXED_LEN_BYTE_ARRAY UUID",
			oneColumn("s", recordstore.TypeString, false),
			column(node(schema.NewPrimitiveNodeLogical("s", parquet.Repetitions.Optional, schema.UUIDLogicalType{}, parquet.Types.FixedLenByteArray, 16, -1)),
				[]parquet.FixedLenByteArray{make([]byte, 16)}, []int16{1}), "column s"),
		Entry("a repeated column",
			oneColumn("i", recordstore.TypeInteger, false),
			rawColumn{node: node(schema.NewPrimitiveNode("i", parquet.Repetitions.Repeated, parquet.Types.Int64, -1, -1)),
				write: func(cw file.ColumnChunkWriter) error {
					_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch([]int64{1, 2}, []int16{1, 1}, []int16{0, 1})
					return err
				}}, "column i"),
	)

	It("refuses a nested column", func() {
		kind := oneColumn("g", recordstore.TypeString, false)
		leaf := optional("x", nil, parquet.Types.Int64)
		group, err := schema.NewGroupNode("g", parquet.Repetitions.Optional, schema.FieldList{leaf}, -1)
		Expect(err).NotTo(HaveOccurred())
		root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{group}, -1)
		Expect(err).NotTo(HaveOccurred())
		data := writeGroups(root, [][]rawColumn{{column(leaf, []int64{1}, []int16{2})}})
		_, err = decodeAll(kind, data, spool.Limits{})
		Expect(err).To(MatchError(pq.ErrSchemaMismatch))
		Expect(err.Error()).To(ContainSubstring(`column "g" is a group`))
	})

	It("refuses a null in a required column when the row is read", func() {
		kind := oneColumn("s", recordstore.TypeString, true)
		data := writeRaw([]rawColumn{column(optional("s", nil, parquet.Types.ByteArray),
			[]parquet.ByteArray{parquet.ByteArray("a")}, []int16{1, 0})})
		got, err := decodeAll(kind, data, spool.Limits{})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("column s is required"))
		Expect(got).To(HaveLen(1))
	})

	DescribeTable("refuses a value the kind does not accept",
		func(t recordstore.ColumnType, col rawColumn, msg string) {
			kind := oneColumn(col.node.Name(), t, false)
			_, err := decodeAll(kind, writeRaw([]rawColumn{col}), spool.Limits{})
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(msg))
			Expect(err.Error()).To(ContainSubstring("column " + col.node.Name()))
		},
		Entry("text that is not UTF-8", recordstore.TypeString,
			column(optional("s", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("\xff")}, []int16{1}), "UTF-8"),
		Entry("json text that is not JSON", recordstore.TypeJSON,
			column(optional("j", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("{nope")}, []int16{1}), "malformed JSON"),
		Entry("json text with a name twice in an inner object", recordstore.TypeJSON,
			column(optional("j", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray(`{"a":{"b":1,"b":2}}`)}, []int16{1}), "appears twice"),
		Entry("json text with a lone surrogate escape", recordstore.TypeJSON,
			column(optional("j", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray(`["\ud800"]`)}, []int16{1}), "lone UTF-16 surrogate"),
		Entry("json text that is not UTF-8", recordstore.TypeJSON,
			column(optional("j", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("[\"\xff\"]")}, []int16{1}), "UTF-8"),
		Entry("empty json text", recordstore.TypeJSON,
			column(optional("j", schema.StringLogicalType{}, parquet.Types.ByteArray), []parquet.ByteArray{parquet.ByteArray("  ")}, []int16{1}), "JSON"),
		Entry("a NaN", recordstore.TypeNumber,
			column(optional("n", nil, parquet.Types.Double), []float64{math.NaN()}, []int16{1}), "finite"),
		Entry("an infinite FLOAT", recordstore.TypeNumber,
			column(optional("n", nil, parquet.Types.Float), []float32{float32(math.Inf(-1))}, []int16{1}), "finite"),
		Entry("a UINT_64 above MaxInt64", recordstore.TypeInteger,
			column(optional("i", schema.NewIntLogicalType(64, false), parquet.Types.Int64), []int64{-1}, []int16{1}), "overflows int64"),
		Entry("a timestamp after year 9999", recordstore.TypeDatetime,
			column(optional("d", schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64), []int64{math.MaxInt64}, []int16{1}), "outside years"),
		Entry("a millisecond timestamp before year 0", recordstore.TypeDatetime,
			column(optional("d", schema.NewTimestampLogicalType(true, schema.TimeUnitMillis), parquet.Types.Int64), []int64{math.MinInt64}, []int16{1}), "outside years"),
		Entry("an INT96 with too many nanoseconds in its day", recordstore.TypeDatetime,
			column(optional("d", nil, parquet.Types.Int96), []parquet.Int96{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}}, []int16{1}), "nanoseconds in a day"),
	)
})
