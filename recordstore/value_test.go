package recordstore_test

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func allTypes() recordstore.Kind {
	k := recordstore.Kind{Name: "all", Columns: []recordstore.Column{
		{Name: "s", Type: recordstore.TypeString},
		{Name: "i", Type: recordstore.TypeInteger},
		{Name: "f", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "t", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
		{Name: "r", Type: recordstore.TypeString, Required: true},
	}}
	Expect(k.Validate()).To(Succeed())
	return k
}

var _ = Describe("Normalize", func() {
	It("stores each type in its fixed form", func() {
		k := allTypes()
		vals, err := k.Normalize(recordstore.Row{
			"s": "héllo", "i": json.Number("9223372036854775807"), "f": json.Number("2"),
			"b": true, "t": "2026-11-29T19:04:05.1234567+01:00",
			"j": json.RawMessage(`{ "a" : [1, 2.50, "x"] }`), "r": "x",
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal(recordstore.Values{
			"héllo", int64(math.MaxInt64), float64(2), int64(1),
			"2026-11-29T18:04:05.123456Z", `{"a":[1,2.50,"x"]}`, "x",
		}))
	})

	It("keeps absent and null columns null", func() {
		k := allTypes()
		vals, err := k.Normalize(recordstore.Row{"r": "x", "s": nil})
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal(recordstore.Values{nil, nil, nil, nil, nil, nil, "x"}))
	})

	DescribeTable("stores a JSON null in a json column as SQL NULL, one null whichever way it is written",
		func(j any) {
			k := allTypes()
			vals, err := k.Normalize(recordstore.Row{"j": j, "r": "x"})
			Expect(err).NotTo(HaveOccurred())
			Expect(vals).To(Equal(recordstore.Values{nil, nil, nil, nil, nil, nil, "x"}))
			k.Columns[5].Required = true
			_, err = k.Normalize(recordstore.Row{"j": j, "r": "x"})
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring("column j is required"))
		},
		Entry("raw null", json.RawMessage(`null`)),
		Entry("raw null with white space", json.RawMessage(" null\n")),
		Entry("a nil slice", []int(nil)),
		Entry("a nil map", map[string]any(nil)),
		Entry("a nil pointer", (*struct{ A int })(nil)),
	)

	It("keeps the text null in a string column, as the Drakkar tables' JSON-as-text columns hold it", func() {
		k := allTypes()
		vals, err := k.Normalize(recordstore.Row{"s": "null", "j": "null", "r": "null"})
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal(recordstore.Values{"null", nil, nil, nil, nil, `"null"`, "null"}), "a JSON string \"null\" is not null")
		Expect(recordstore.JSONNull(`"null"`)).To(BeFalse())
		Expect(recordstore.JSONNull(`null`)).To(BeTrue())
	})

	It("accepts Go values of the natural types", func() {
		k := allTypes()
		at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600))
		vals, err := k.Normalize(recordstore.Row{
			"i": int64(math.MinInt64), "f": 1.5, "b": false, "t": at, "j": map[string]any{"k": "v"}, "r": "x",
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal(recordstore.Values{
			nil, int64(math.MinInt64), 1.5, int64(0), "2026-01-02T02:04:05.000006Z", `{"k":"v"}`, "x",
		}))
	})

	DescribeTable("refuses values that do not fit",
		func(row recordstore.Row, fragment string) {
			k := allTypes()
			if _, ok := row["r"]; !ok {
				row["r"] = "x"
			}
			_, err := k.Normalize(row)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err.Error()).To(ContainSubstring(fragment))
		},
		Entry("an unknown column", recordstore.Row{"zzz": 1}, `unknown column "zzz"`),
		Entry("a string into integer", recordstore.Row{"i": "12"}, "column i"),
		Entry("1.5 into integer", recordstore.Row{"i": json.Number("1.5")}, "not an integer"),
		Entry("1.5 float into integer", recordstore.Row{"i": 1.5}, "not an integer"),
		Entry("an integer beyond int64", recordstore.Row{"i": json.Number("9223372036854775808")}, "column i"),
		Entry("a float beyond exact range", recordstore.Row{"i": 1e300}, "exact integer range"),
		Entry("a non-RFC 3339 datetime", recordstore.Row{"t": "29/11/2026"}, "RFC 3339"),
		Entry("a number into datetime", recordstore.Row{"t": json.Number("1")}, "column t"),
		Entry("a number into string", recordstore.Row{"s": json.Number("1")}, "column s"),
		Entry("a string into bool", recordstore.Row{"b": "true"}, "column b"),
		Entry("a string that is not UTF-8", recordstore.Row{"s": "a\xffb"}, "not valid UTF-8"),
		Entry("NaN into number", recordstore.Row{"f": math.NaN()}, "finite"),
		Entry("malformed raw JSON", recordstore.Row{"j": json.RawMessage(`{"a":`)}, "malformed JSON"),
		Entry("a missing required column", recordstore.Row{"r": nil}, "required"),
	)

	It("takes every Go integer type into a number column, as into an integer one", func() {
		k := allTypes()
		for _, v := range []any{int8(-3), int16(-3), int32(-3), int64(-3), -3, uint8(3), uint16(3), uint32(3), uint64(3), uint(3)} {
			vals, err := k.Normalize(recordstore.Row{"f": v, "i": v, "r": "x"})
			Expect(err).NotTo(HaveOccurred(), "%T", v)
			Expect(math.Abs(vals[2].(float64))).To(Equal(3.0), "%T", v)
			Expect(vals[1]).To(BeNumerically("==", vals[2].(float64)), "%T", v)
		}
	})

	It("treats key columns as required", func() {
		k := jobs()
		Expect(k.Validate()).To(Succeed())
		k.Columns[0].Required = false
		_, err := k.Normalize(recordstore.Row{"n": 1})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring("column id is required"))
	})

	It("decodes stored values back into reader values", func() {
		k := allTypes()
		vals, err := k.Normalize(recordstore.Row{"i": int64(7), "f": 2.5, "b": true,
			"t": "2026-11-29T18:04:05Z", "j": json.RawMessage(`[1]`), "r": "x"})
		Expect(err).NotTo(HaveOccurred())
		row := k.Decode(vals)
		Expect(row).To(HaveKeyWithValue("s", BeNil()))
		Expect(row).To(HaveKeyWithValue("i", int64(7)))
		Expect(row).To(HaveKeyWithValue("f", 2.5))
		Expect(row).To(HaveKeyWithValue("b", true))
		Expect(row).To(HaveKeyWithValue("t", time.Date(2026, 11, 29, 18, 4, 5, 0, time.UTC)))
		Expect(row).To(HaveKeyWithValue("j", json.RawMessage(`[1]`)))
	})
})

var _ = Describe("Record JSON", func() {
	It("prints integers exactly, json raw, datetimes with microseconds and nulls", func() {
		rec := recordstore.Record{Seq: 3, Values: recordstore.Row{
			"i": int64(math.MaxInt64), "j": json.RawMessage(`{"a":1}`),
			"t": time.Date(2026, 11, 29, 18, 4, 5, 0, time.UTC), "n": nil, "s": "x",
		}}
		b, err := json.Marshal(rec)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(`{"_seq":3,"i":9223372036854775807,"j":{"a":1},"n":null,"s":"x","t":"2026-11-29T18:04:05.000000Z"}`))
	})

	It("prints meta times in the stored form and a null expiry", func() {
		at := time.Date(2026, 11, 29, 18, 4, 5, 0, time.UTC)
		b, err := json.Marshal(recordstore.Meta{Stream: "s", Kind: "k", Generation: 1, CreatedAt: at, UpdatedAt: at})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(`{"stream":"s","kind":"k","generation":1,"total":0,"lowSeq":0,"highSeq":0,"sealed":false,` +
			`"createdAt":"2026-11-29T18:04:05.000000Z","updatedAt":"2026-11-29T18:04:05.000000Z","expiresAt":null}`))
	})
})

var _ = Describe("CompactJSON", func() {
	DescribeTable("returns one JSON value's compact text",
		func(raw, want string) {
			got, err := recordstore.CompactJSON([]byte(raw))
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("compact already", `{"k":1,"v":[1,2,3]}`, `{"k":1,"v":[1,2,3]}`),
		Entry("with white space", " {\"k\" : 1,\n\t\"v\": [1, 2]}\r\n", `{"k":1,"v":[1,2]}`),
		Entry("white space inside a string is kept", `{"k": "a b"}`, `{"k":"a b"}`),
		Entry("a scalar", `12.5e3`, `12.5e3`),
	)
	DescribeTable("refuses what is not one JSON value",
		func(raw string) {
			_, err := recordstore.CompactJSON([]byte(raw))
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		},
		Entry("empty", ``),
		Entry("only space", `   `),
		Entry("two values, no space", `{}{}`),
		Entry("two values, spaced", `1 2`),
		Entry("truncated", `{"k":`),
		Entry("a bare word", `nope`),
	)
})

var _ = Describe("refusals name the value they got", func() {
	DescribeTable("for a string column",
		func(v any, says string) {
			k := recordstore.Kind{Name: "k", Columns: []recordstore.Column{{Name: "s", Type: recordstore.TypeString}}}
			_, err := k.Normalize(recordstore.Row{"s": v})
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(err.Error()).To(HaveSuffix("want a string, got " + says))
		},
		Entry("a JSON number", json.Number("6"), "the number 6"),
		Entry("a bool", true, "a bool"),
		Entry("an object", map[string]any{}, "an object"),
		Entry("a Go integer", int64(5), "int64 5"),
		Entry("a Go duration", time.Second, "time.Duration 1000000000"),
		Entry("a long Go value", [20]int{}, "a value of type [20]int"),
	)
})

var _ = Describe("FormatDatetime", func() {
	It("writes the stored layout by hand, as time.Format would", func() {
		zones := []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+1800), time.FixedZone("minus", -11*3600)}
		instants := []time.Time{
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
			time.Date(2024, 2, 29, 12, 0, 0, 1_999, time.UTC),
			time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(0, 6, 1, 0, 0, 0, 500, time.UTC),   // year 0: the general path
			time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // beyond 9999: the general path
		}
		for i := int64(0); i < 2000; i++ {
			ns := i * 7_777_777 % 1_000_000_000
			instants = append(instants, time.Unix(i*98_765_431+i*i*7, ns), time.Unix(-i*31_234_567_891%62_000_000_000, ns))
		}
		for _, t := range instants {
			for _, z := range zones {
				tz := t.In(z)
				want := tz.UTC().Truncate(time.Microsecond).Format(recordstore.DatetimeLayout)
				Expect(recordstore.FormatDatetime(tz)).To(Equal(want), "%v", tz)
			}
		}
	})
})

var _ = Describe("datetime range of a time.Time value", func() {
	k := recordstore.Kind{Name: "t", Columns: []recordstore.Column{{Name: "at", Type: recordstore.TypeDatetime}}}
	DescribeTable("years 0000-9999 are stored, others refused",
		func(t time.Time, want string) {
			vals, err := k.Normalize(recordstore.Row{"at": t})
			if want == "" {
				Expect(err).To(MatchError(recordstore.ErrInvalid))
				Expect(err).To(MatchError(ContainSubstring("outside years 0000-9999")))
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(vals[0]).To(Equal(want))
		},
		Entry("the last nanosecond of year -1", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond), ""),
		Entry("the first instant of year 0", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "0000-01-01T00:00:00.000000Z"),
		Entry("a leap day of year 0", time.Date(0, 2, 29, 12, 0, 0, 0, time.UTC), "0000-02-29T12:00:00.000000Z"),
		Entry("the first instant of year 1", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "0001-01-01T00:00:00.000000Z"),
		Entry("a leap day", time.Date(2000, 2, 29, 23, 59, 59, 999_999_999, time.UTC), "2000-02-29T23:59:59.999999Z"),
		Entry("before 1970, east of UTC", time.Date(1969, 12, 31, 23, 59, 59, 500_000, time.FixedZone("x", 3600)), "1969-12-31T22:59:59.000500Z"),
		Entry("the last microsecond of year 9999", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "9999-12-31T23:59:59.999999Z"),
		Entry("year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ""),
		Entry("year 9999 in a zone west of UTC, year 10000 in UTC", time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("w", -3600)), ""),
	)
})
