package recordstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func jobs() recordstore.Kind {
	return recordstore.Kind{
		Name: "jobs",
		Columns: []recordstore.Column{
			{Name: "id", Type: recordstore.TypeString, Required: true},
			{Name: "n", Type: recordstore.TypeInteger},
			{Name: "at", Type: recordstore.TypeDatetime},
		},
		Key: []string{"id"},
	}
}

var _ = Describe("Kind", func() {
	It("reads and writes the documented JSON shape", func() {
		src := `{"name":"jobs","columns":[{"name":"id","type":"string","required":true},{"name":"n","type":"integer"},{"name":"at","type":"datetime"},{"name":"v","type":"integer"},{"name":"o","type":"string"}],
		"key":["id"],"onConflict":"lww","lww":{"version":"v","tiebreak":"o"},"retention":{"mode":"stream","ttl":"24h"},"timeColumn":"at","indexes":[["n"]]}`
		var k recordstore.Kind
		Expect(json.Unmarshal([]byte(src), &k)).To(Succeed())
		Expect(k.Validate()).To(Succeed())
		Expect(k.Retention.TTL).To(Equal(recordstore.Duration(24 * time.Hour)))
		out, err := json.Marshal(k)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(ContainSubstring(`"retention":{"mode":"stream","ttl":"24h0m0s"}`))
		var back recordstore.Kind
		Expect(json.Unmarshal(out, &back)).To(Succeed())
		Expect(back).To(Equal(k))
	})

	It("defaults the conflict policy to skip", func() {
		k := jobs()
		Expect(k.Validate()).To(Succeed())
		Expect(k.OnConflict).To(Equal(recordstore.ConflictSkip))
	})

	DescribeTable("refuses invalid declarations with ErrInvalid",
		func(mutate func(*recordstore.Kind), fragment string) {
			k := jobs()
			mutate(&k)
			err := k.Validate()
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(fragment))
		},
		Entry("a name starting with a digit", func(k *recordstore.Kind) { k.Name = "1jobs" }, "kind name"),
		Entry("a name with a dash", func(k *recordstore.Kind) { k.Name = "my-jobs" }, "kind name"),
		Entry("a 64-character name", func(k *recordstore.Kind) { k.Name = "a" + string(repeat('b', 63)) }, "kind name"),
		Entry("no columns", func(k *recordstore.Kind) { k.Columns = nil }, "no columns"),
		Entry("a duplicate column (case-insensitive)", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "ID", Type: recordstore.TypeString})
		}, "declared twice"),
		Entry("a reserved column name", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "_seq", Type: recordstore.TypeInteger})
		}, "column name"),
		Entry("an unknown type", func(k *recordstore.Kind) { k.Columns[1].Type = "float" }, "unknown type"),
		Entry("a key on an unknown column", func(k *recordstore.Kind) { k.Key = []string{"nope"} }, "key names unknown"),
		Entry("replace without a key", func(k *recordstore.Kind) { k.Key = nil; k.OnConflict = recordstore.ConflictReplace }, "needs a key"),
		Entry("lww without a version", func(k *recordstore.Kind) { k.OnConflict = recordstore.ConflictLWW }, "lww"),
		Entry("lww options on a skip kind", func(k *recordstore.Kind) { k.LWW = &recordstore.LWW{Version: "n"} }, "only allowed"),
		Entry("an unknown policy", func(k *recordstore.Kind) { k.OnConflict = "merge" }, "onConflict"),
		Entry("a retention mode typo", func(k *recordstore.Kind) {
			k.Retention = &recordstore.Retention{Mode: "row", TTL: recordstore.Duration(time.Hour)}
		}, "retention.mode"),
		Entry("a zero ttl", func(k *recordstore.Kind) { k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows} }, "ttl"),
		Entry("a timeColumn that is not a datetime", func(k *recordstore.Kind) { k.TimeColumn = "n" }, "timeColumn"),
		Entry("an index on an unknown column", func(k *recordstore.Kind) { k.Indexes = [][]string{{"x"}} }, "index"),
		Entry("a json key column", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "doc", Type: recordstore.TypeJSON})
			k.Key = []string{"id", "doc"}
		}, "key column doc is json"),
		Entry("a json lww version", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "doc", Type: recordstore.TypeJSON})
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "doc"}
		}, "lww.version"),
		Entry("a json lww tiebreak", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "doc", Type: recordstore.TypeJSON})
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "n", Tiebreak: "doc"}
		}, "lww.tiebreak"),
		Entry("an lww version that is a key column", func(k *recordstore.Kind) {
			k.Key = []string{"id", "n"}
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "n"}
		}, "lww.version n is a key column"),
		Entry("an lww tiebreak that is the version", func(k *recordstore.Kind) {
			k.Columns = append(k.Columns, recordstore.Column{Name: "v", Type: recordstore.TypeString})
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "v", Tiebreak: "v"}
		}, "lww.tiebreak v is also lww.version"),
		Entry("an lww tiebreak that is a key column", func(k *recordstore.Kind) {
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "n", Tiebreak: "id"}
		}, "lww.tiebreak id is a key column"),
		Entry("an lww version naming an unknown column", func(k *recordstore.Kind) {
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "nope"}
		}, `lww.version "nope"`),
		Entry("an lww tiebreak naming an unknown column", func(k *recordstore.Kind) {
			k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "n", Tiebreak: "nope"}
		}, `lww.tiebreak "nope"`),
		Entry("a ttl below one second", func(k *recordstore.Kind) {
			k.Retention = &recordstore.Retention{Mode: recordstore.RetainStream, TTL: recordstore.Duration(86400)}
		}, "retention.ttl 86.4µs: want at least 1s"),
		Entry("more columns than SQLite allows a table, less the store's two", func(k *recordstore.Kind) {
			k.Columns = manyColumns(recordstore.MaxColumns + 1)
			k.Key = nil
		}, "1999 columns: a kind has at most 1998 columns (SQLite allows 2000 per table, and the store adds 2)"),
		Entry("more key columns than the limit", func(k *recordstore.Kind) {
			k.Columns = manyColumns(recordstore.MaxKeyColumns + 1)
			k.Key = columnNames(k.Columns)
		}, "501 key columns: a key has at most 500"),
		Entry("more indexes than the limit", func(k *recordstore.Kind) {
			k.Columns = manyColumns(recordstore.MaxIndexes + 1)
			k.Key = nil
			for _, name := range columnNames(k.Columns) {
				k.Indexes = append(k.Indexes, []string{name})
			}
		}, "65 indexes: a kind has at most 64"),
		Entry("an index naming a column twice", func(k *recordstore.Kind) { k.Indexes = [][]string{{"n"}, {"n", "at", "n"}} }, "index 2 names column n twice"),
		Entry("a huge column name, quoted only in part", func(k *recordstore.Kind) {
			k.Columns[1].Name = string(repeat('x', 1<<20))
		}, `"`+string(repeat('x', 200))+`"... (1048576 bytes)`),
	)

	It("accepts a kind at every limit", func() {
		k := recordstore.Kind{Name: "wide", Columns: manyColumns(recordstore.MaxColumns)}
		k.Key = columnNames(k.Columns[:recordstore.MaxKeyColumns])
		for _, name := range columnNames(k.Columns[:recordstore.MaxIndexes]) {
			k.Indexes = append(k.Indexes, []string{name})
		}
		k.Indexes[0] = columnNames(k.Columns)
		k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(recordstore.MinTTL)}
		Expect(k.Validate()).To(Succeed())
	})

	It("drops an index equal to an earlier one, keeping the order of the others", func() {
		k := jobs()
		k.Indexes = [][]string{{"n"}, {"at", "n"}, {"n"}, {"n", "at"}, {"at", "n"}}
		Expect(k.Validate()).To(Succeed())
		Expect(k.Indexes).To(Equal([][]string{{"n"}, {"at", "n"}, {"n", "at"}}))
	})

	It("still reads, as stored, a kind an earlier build declared under looser rules", func() {
		k := jobs()
		k.Columns = append(k.Columns, recordstore.Column{Name: "doc", Type: recordstore.TypeJSON}, recordstore.Column{Name: "v", Type: recordstore.TypeInteger})
		k.Key = []string{"doc", "v"}
		k.OnConflict, k.LWW = recordstore.ConflictLWW, &recordstore.LWW{Version: "v"}
		k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Millisecond)}
		k.Indexes = [][]string{{"n"}, {"n"}}
		Expect(k.Validate()).To(MatchError(recordstore.ErrInvalid))
		Expect(k.ValidateStored()).To(Succeed())
		Expect(k.Indexes).To(Equal([][]string{{"n"}}))
		bad := k
		bad.Name = "9"
		Expect(bad.ValidateStored()).To(MatchError(recordstore.ErrInvalid), "the older rules still hold")
	})

	DescribeTable("reads a retention ttl only as duration text",
		func(src string, want time.Duration, fragment string) {
			var k recordstore.Kind
			err := json.Unmarshal([]byte(`{"name":"k","columns":[{"name":"a","type":"string"}],"retention":`+src+`}`), &k)
			if fragment == "" {
				Expect(err).NotTo(HaveOccurred())
				Expect(time.Duration(k.Retention.TTL)).To(Equal(want))
				return
			}
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err.Error()).To(ContainSubstring(fragment))
		},
		Entry("text", `{"mode":"stream","ttl":"24h"}`, 24*time.Hour, ""),
		Entry("a bare number, which would be nanoseconds", `{"mode":"stream","ttl":86400}`, time.Duration(0), `ttl 86400: want text like "24h"`),
		Entry("a fraction", `{"mode":"rows","ttl":1.5}`, time.Duration(0), `ttl 1.5: want text like "24h"`),
		Entry("a huge number, quoted only in part", `{"mode":"rows","ttl":`+string(repeat('9', 5000))+`}`, time.Duration(0), "... (5000 bytes)"),
		Entry("huge duration text, quoted only in part", `{"mode":"rows","ttl":"`+string(repeat('9', 5000))+`"}`, time.Duration(0), "... (5000 bytes)"),
	)

	It("refuses a duration that is not duration text", func() {
		var r recordstore.Retention
		err := json.Unmarshal([]byte(`{"mode":"rows","ttl":"a day"}`), &r)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})

	Describe("Reconcile", func() {
		var stored recordstore.Kind
		BeforeEach(func() {
			stored = jobs()
			Expect(stored.Validate()).To(Succeed())
		})

		It("is a no-op for an identical declaration", func() {
			got, status, err := recordstore.Reconcile(stored, jobs(), false)
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(recordstore.KindUnchanged))
			Expect(got).To(Equal(stored))
		})

		It("appends new columns", func() {
			in := jobs()
			in.Columns = append(in.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeJSON})
			got, status, err := recordstore.Reconcile(stored, in, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(recordstore.KindUpdated))
			Expect(got.Columns).To(HaveLen(4))
			Expect(got.Columns[3].Name).To(Equal("extra"))
		})

		It("accepts a subset only when asked to", func() {
			in := jobs()
			in.Columns = in.Columns[:2]
			_, _, err := recordstore.Reconcile(stored, in, false)
			Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
			got, status, err := recordstore.Reconcile(stored, in, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(recordstore.KindUnchanged))
			Expect(got).To(Equal(stored))
		})

		DescribeTable("refuses other changes with ErrSchemaConflict",
			func(mutate func(*recordstore.Kind)) {
				in := jobs()
				mutate(&in)
				_, _, err := recordstore.Reconcile(stored, in, true)
				Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
				Expect(recordstore.Code(err)).To(Equal("schema_conflict"))
			},
			Entry("a changed type", func(k *recordstore.Kind) { k.Columns[1].Type = recordstore.TypeNumber }),
			Entry("a changed required flag", func(k *recordstore.Kind) { k.Columns[1].Required = true }),
			Entry("a changed key", func(k *recordstore.Kind) { k.Key = []string{"id", "n"} }),
			Entry("a changed policy", func(k *recordstore.Kind) { k.OnConflict = recordstore.ConflictReplace }),
			Entry("a new retention", func(k *recordstore.Kind) {
				k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)}
			}),
			Entry("new indexes", func(k *recordstore.Kind) { k.Indexes = [][]string{{"n"}} }),
		)

		It("refuses added columns that would pass the column limit with ErrInvalid", func() {
			in := jobs()
			in.Columns = append(in.Columns, manyColumns(recordstore.MaxColumns-len(stored.Columns))...)
			_, status, err := recordstore.Reconcile(stored, in, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(recordstore.KindUpdated))
			in.Columns = append(in.Columns, recordstore.Column{Name: "one_more", Type: recordstore.TypeString})
			_, _, err = recordstore.Reconcile(stored, in, false)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring("would make 1999: a kind has at most 1998 columns"))
		})
	})
})

var _ = Describe("names", func() {
	DescribeTable("stream ids",
		func(id string, ok bool) {
			err := recordstore.ValidateStreamID(id)
			if ok {
				Expect(err).NotTo(HaveOccurred())
			} else {
				Expect(err).To(MatchError(recordstore.ErrInvalid))
			}
		},
		Entry("plain", "jobs-2026.11:a_b", true),
		Entry("200 characters", string(repeat('a', 200)), true),
		Entry("201 characters", string(repeat('a', 201)), false),
		Entry("empty", "", false),
		Entry("dot", ".", false),
		Entry("dot dot", "..", false),
		Entry("a slash", "a/b", false),
		Entry("a space", "a b", false),
		Entry("unicode", "é", false),
	)
})

// manyColumns returns n string columns named c0, c1, ...
func manyColumns(n int) []recordstore.Column {
	out := make([]recordstore.Column, n)
	for i := range out {
		out[i] = recordstore.Column{Name: fmt.Sprintf("c%d", i), Type: recordstore.TypeString}
	}
	return out
}

func columnNames(cols []recordstore.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

var _ = Describe("Kind.Clone", func() {
	It("copies every slice and pointer, so changing the copy leaves the original", func() {
		full := func() recordstore.Kind { // a fresh literal each time
			return recordstore.Kind{Name: "doc",
				Columns:    []recordstore.Column{{Name: "id", Type: recordstore.TypeString, Required: true}, {Name: "v", Type: recordstore.TypeInteger}},
				Key:        []string{"id"},
				OnConflict: recordstore.ConflictLWW,
				LWW:        &recordstore.LWW{Version: "v"},
				Retention:  &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)},
				Indexes:    [][]string{{"v"}, {"v", "id"}},
			}
		}
		k := full()
		c := k.Clone()
		Expect(c).To(Equal(k))
		c.Columns[0].Name = "changed"
		c.Key[0] = "changed"
		c.LWW.Version = "changed"
		c.Retention.TTL = 0
		c.Indexes[1][0] = "changed"
		Expect(k).To(Equal(full()), "the original is untouched")
		Expect(recordstore.Kind{Name: "bare"}.Clone()).To(Equal(recordstore.Kind{Name: "bare"}), "nil stays nil")
	})
})
