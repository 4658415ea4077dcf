// Specs for key identity: when two normalized rows have the same key.

package recordstore_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("key identity", func() {
	kind := func(cols ...recordstore.Column) *recordstore.Kind {
		k := &recordstore.Kind{Name: "k", Columns: cols}
		for _, c := range cols {
			k.Key = append(k.Key, c.Name)
		}
		Expect(k.Validate()).To(Succeed())
		return k
	}
	same := func(k *recordstore.Kind, a, b recordstore.Values) bool {
		return string(k.AppendRowKey(nil, a)) == string(k.AppendRowKey(nil, b))
	}
	num := recordstore.Column{Name: "x", Type: recordstore.TypeNumber}
	str := recordstore.Column{Name: "s", Type: recordstore.TypeString}
	integer := recordstore.Column{Name: "i", Type: recordstore.TypeInteger}

	It("holds 0 and -0 one number key, as SQLite does", func() {
		k := kind(num)
		Expect(same(k, recordstore.Values{0.0}, recordstore.Values{math.Copysign(0, -1)})).To(BeTrue())
		Expect(same(k, recordstore.Values{1.0}, recordstore.Values{int64(1)})).To(BeTrue(), "a whole float64 and its int64")
		Expect(same(k, recordstore.Values{0.5}, recordstore.Values{0.25})).To(BeFalse())
		Expect(same(k, recordstore.Values{math.MaxFloat64}, recordstore.Values{-math.MaxFloat64})).To(BeFalse())
		Expect(same(k, recordstore.Values{9007199254740993.0}, recordstore.Values{int64(9007199254740993)})).To(BeFalse(),
			"2^53+1 is no float64: the float is 2^53")
	})

	It("tells composite keys apart by each part", func() {
		k := kind(str, integer)
		Expect(same(k, recordstore.Values{"a", int64(1)}, recordstore.Values{"a", int64(1)})).To(BeTrue())
		Expect(same(k, recordstore.Values{"a", int64(1)}, recordstore.Values{"a", int64(2)})).To(BeFalse())
		Expect(same(k, recordstore.Values{"ab", int64(1)}, recordstore.Values{"a", int64(1)})).To(BeFalse())
		Expect(same(k, recordstore.Values{"", int64(0)}, recordstore.Values{nil, int64(0)})).To(BeFalse())
	})

	It("is empty for a kind without a key", func() {
		k := &recordstore.Kind{Name: "k", Columns: []recordstore.Column{num}}
		Expect(k.AppendRowKey(nil, recordstore.Values{1.0})).To(BeEmpty())
	})
})
