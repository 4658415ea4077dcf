// Specs for the fast decoder: it must agree with recordstore.Kind.Decode.

package sqlite

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("decodeValue", func() {
	DescribeTable("agrees with recordstore.DecodeValue",
		func(typ recordstore.ColumnType, v any) {
			want := recordstore.DecodeValue(typ, v)
			if want == nil {
				Expect(decodeValue(typ, v)).To(BeNil())
				return
			}
			Expect(decodeValue(typ, v)).To(Equal(want))
		},
		Entry("a string", recordstore.TypeString, "x"),
		Entry("a string stored as bytes", recordstore.TypeString, []byte("x")),
		Entry("an integer", recordstore.TypeInteger, int64(-7)),
		Entry("an integer stored as a float", recordstore.TypeInteger, 3.0),
		Entry("a number", recordstore.TypeNumber, 2.5),
		Entry("a number stored as an integer", recordstore.TypeNumber, int64(2)),
		Entry("true", recordstore.TypeBool, int64(1)),
		Entry("false", recordstore.TypeBool, int64(0)),
		Entry("a stored datetime", recordstore.TypeDatetime, "2031-05-06T07:08:09.123456Z"),
		Entry("the first datetime", recordstore.TypeDatetime, "0000-01-01T00:00:00.000000Z"),
		Entry("the last datetime", recordstore.TypeDatetime, "9999-12-31T23:59:59.999999Z"),
		Entry("a leap day", recordstore.TypeDatetime, "2024-02-29T12:00:00.000000Z"),
		Entry("31 February", recordstore.TypeDatetime, "2023-02-31T12:00:00.000000Z"),
		Entry("a datetime with an offset", recordstore.TypeDatetime, "2031-05-06T07:08:09.123456+02:00"),
		Entry("a datetime without fraction", recordstore.TypeDatetime, "2031-05-06T07:08:09Z"),
		Entry("text that is no datetime", recordstore.TypeDatetime, "2031-05-06Tab:08:09.123456Z"),
		Entry("json", recordstore.TypeJSON, `{"a":1}`),
		Entry("null", recordstore.TypeJSON, nil),
	)
})
