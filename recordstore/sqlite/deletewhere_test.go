// Specs for DeleteWhere: deleting a bound stream's rows by a condition on
// their columns, in the owner only.

package sqlite_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("DeleteWhere", func() {
	var b *sqlite.Backend
	entry := func(key string, expires any) recordstore.Row {
		return recordstore.Row{"key": key, "scope": "local", "value": `1`, "size_bytes": 1,
			"created_at_ms": 1, "updated_at_ms": 1, "expires_at_ms": expires, "origin_worker_id": "w"}
	}
	BeforeEach(func() {
		b = openStore(newClock())
		declare(b, boundCache())
		mustAppend(b, "c", "cache", entry("a", 5), entry("b", nil), entry("c", 20), entry("d", 7))
	})

	It("deletes exactly the rows the condition selects and keeps the stream's counters true", func() {
		n, err := b.DeleteWhere(ctx, "c", "expires_at_ms IS NOT NULL AND expires_at_ms <= ?", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeEquivalentTo(2))
		var keys []string
		for _, r := range mustScan(b, "c") {
			keys = append(keys, r.Values["key"].(string))
		}
		Expect(keys).To(Equal([]string{"b", "c"}))
		m := mustMeta(b, "c")
		Expect(m.LowSeq).To(BeEquivalentTo(2))

		n, err = b.DeleteWhere(ctx, "c", "expires_at_ms <= ?", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
		Expect(mustMeta(b, "c")).To(Equal(m))
	})

	It("refuses an empty condition, a stream that is not live and a kind that is not bound", func() {
		_, err := b.DeleteWhere(ctx, "c", "  ")
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		_, err = b.DeleteWhere(ctx, "nope", "1")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		declare(b, recordstore.Kind{Name: "plain", Columns: cols("a", tText)})
		mustAppend(b, "p", "plain", recordstore.Row{"a": "x"})
		_, err = b.DeleteWhere(ctx, "p", "1")
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(mustScan(b, "p")).To(HaveLen(1))
		Expect(mustScan(b, "c")).To(HaveLen(4))
	})

	It("is refused by a read-only backend, which deletes nothing", func() {
		ro := openAt(b.Path(), sqlite.Options{ReadOnly: true})
		_, err := ro.DeleteWhere(ctx, "c", "1")
		Expect(err).To(MatchError(recordstore.ErrReadOnly))
		Expect(mustScan(b, "c")).To(HaveLen(4))
	})
})
